/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sub-commands: each parses its argv, calls its subsystem through
 * that subsystem's structs and functions, and returns an exit code
 * (RB_EXIT_*). Only main.c calls them; one subsystem never reaches
 * another through argv (docs/ARCHITECTURE.md; tests/layers.sh checks).
 */
#ifndef RAMBOOT_CMD_H
#define RAMBOOT_CMD_H

int cmd_load(int argc, char **argv);
int cmd_manifest(int argc, char **argv);
int cmd_publish(int argc, char **argv);
int cmd_swap(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_boot(int argc, char **argv);
int cmd_initrd(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_keygen(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verity(int argc, char **argv);
int cmd_lazy(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_cache(int argc, char **argv);

#endif
