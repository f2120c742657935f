/*
 * fuzz_stateyaml.c - fuzz target for the state YAML reader
 * (learn/stateyaml.c, `nccl-bot state import`) and its writer.
 *
 * An import is what a person hands to a state directory, so any bytes
 * must come back as a refusal naming "s.yaml" with nothing allocated, or
 * as a state the snapshot codec encodes; and that state exported and
 * imported again must encode to the same snapshot bytes (the writer and
 * the reader agree on everything, floats included). Built with
 * tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/state.h"
#include "learn/stateyaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_state s, t;
	char err[1024], *text;
	uint8_t *a, *b;
	size_t alen, blen, tlen;

	err[0] = 0;
	if (bot_stateyaml_import("s.yaml", data, size, &s, err, sizeof(err)) < 0) {
		if (s.kb || s.src || strncmp(err, "s.yaml", 6))
			abort();
		return 0;
	}
	if (bot_stateyaml_export(&s, &text, &tlen, err, sizeof(err)) < 0)
		abort();
	if (bot_stateyaml_import("again.yaml", text, tlen, &t, err, sizeof(err)) < 0)
		abort();
	if (bot_state_encode(&s, &a, &alen, err, sizeof(err)) < 0 ||
	    bot_state_encode(&t, &b, &blen, err, sizeof(err)) < 0)
		abort();
	if (alen != blen || memcmp(a, b, alen))
		abort();
	free(a);
	free(b);
	free(text);
	bot_state_free(&s);
	bot_state_free(&t);
	return 0;
}
