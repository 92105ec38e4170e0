// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * policy.c: the verification policy over a manifest's bytes read already
 * (the cache's refresh): parsed as a file would be, the chunk hashes kept
 * or not as asked, the name given in messages, an unsigned text refused
 * under --signed, a --sha256 that disagrees refused.
 */
#include <string.h>

#include "tap.h"
#include "trust/policy.h"

#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define OTHER "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define V1 "ramboot-manifest 1\nsize 4096\nsha256 " HEX "\n"
#define V2 "ramboot-manifest 2\nsize 65536\nsha256 " HEX "\nchunk-size 65536\nchunk 0 " HEX "\n"

static char sha[65], who[96], err[512];
static struct manifest man;
static bool have;

static enum run_err read_text(const char *text, bool chunks, bool signed_only,
			      const char *want_sha)
{
	const struct trust_policy p = {
		.sha256 = want_sha, .manifest = "server/image.manifest", .signed_only = signed_only,
		.keydir = "/nonexistent", .chunks = chunks, .text = text, .text_len = strlen(text),
	};
	const struct trust_want w = {
		.sha256 = sha, .man = &man, .have_man = &have, .signed_by = who,
		.signed_by_len = sizeof(who),
	};

	have = false;
	err[0] = '\0';
	return trust_policy_read(&p, &w, err, sizeof(err));
}

static void text_parsed(void)
{
	CHECK_EQ_INT(read_text(V1, false, false, NULL), RUN_OK);
	CHECK(have);
	CHECK_EQ_INT(man.size, 4096);
	CHECK_EQ_STR(sha, HEX);
	CHECK_EQ_INT(read_text(V1, false, false, HEX), RUN_OK);
	manifest_free(&man);
}

static void chunks_as_asked(void)
{
	CHECK_EQ_INT(read_text(V2, true, false, NULL), RUN_OK);
	CHECK(man.chunk != NULL);
	CHECK_EQ_INT(man.nchunks, 1);
	manifest_free(&man);
	CHECK_EQ_INT(read_text(V2, false, false, NULL), RUN_OK);
	CHECK(man.chunk == NULL);
}

static void refusals(void)
{
	CHECK_EQ_INT(read_text("ramboot-manifest 1\nsize x\n", true, false, NULL), RUN_MANIFEST);
	CHECK(!have);
	CHECK(!strncmp(err, "server/image.manifest: ", 23));
	/* Signed or refused: the text's bytes are what is checked. */
	CHECK_EQ_INT(read_text(V1, true, true, NULL), RUN_SIGNATURE);
	CHECK(!have);
	CHECK_EQ_STR(err, "server/image.manifest: not signed");
	CHECK_EQ_INT(read_text(V1, true, false, OTHER), RUN_USAGE);
	CHECK_EQ_STR(err, "--sha256 and --manifest disagree");
	manifest_free(&man);
}

int main(void)
{
	RUN(text_parsed);
	RUN(chunks_as_asked);
	RUN(refusals);
	return TAP_DONE();
}
