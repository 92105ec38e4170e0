// SPDX-License-Identifier: GPL-2.0-or-later
#include "ramboot.h"

int cmd_initrd(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	rb_err("not implemented yet");
	return RB_EXIT_FAIL;
}
