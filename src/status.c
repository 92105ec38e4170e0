// SPDX-License-Identifier: GPL-2.0-or-later
#include "ramboot.h"

int cmd_status(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	rb_err("not implemented yet");
	return RB_EXIT_FAIL;
}
