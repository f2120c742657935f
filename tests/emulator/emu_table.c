/*
 * emu_table.c - NCCL_BOT_TABLE values for the emulator's scenarios.
 *
 * Tables are built with the project's encoder (common/table.h) from seeded
 * random plans over the contexts the emulated communicators will call:
 * exploit arms that are supported, unsupported (-> AUTO) or BOT_ARM_AUTO,
 * up to four probe ranges, nChannels, scale corrections, and ~10% of the
 * contexts left out (-> the policy on the prior). Random plans exercise the
 * decoder and the decision path harder than a compiled table would; what
 * matters here is only that every rank decides the same from them.
 *
 * The mutators (a flipped payload byte; a valid format-version-4 table, a
 * version this build does not read) and
 * the digest are implemented here from doc/formats.md section 8, not with
 * the encoder, so the test does not share the code it checks.
 * Built with -DEMU_NO_TABLE (before common/table.c exists) no table can be
 * built and table scenarios are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/emulator/emu.h"

#ifndef EMU_NO_TABLE
#include "common/table.h"
#endif

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

uint64_t emu_digest(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return emu_mix64(h);
}

static int b64val(char c)
{
	const char *s = c ? strchr(b64, c) : NULL;

	return s ? (int)(s - b64) : -1;
}

/* Split "NBTn.<hex16>.<b64>"; payload decoded into a malloc'ed buffer. */
static int parse(const char *text, uint64_t *digest, uint8_t **payload, size_t *plen)
{
	const char *dot1, *dot2, *s;
	size_t n, o = 0;
	uint32_t acc = 0;
	int bits = 0;
	uint8_t *p;

	if (strncmp(text, "NBT", 3))
		return -1;
	dot1 = strchr(text, '.');
	if (!dot1 || !(dot2 = strchr(dot1 + 1, '.')) || dot2 - dot1 != 17)
		return -1;
	*digest = strtoull(dot1 + 1, NULL, 16);
	s = dot2 + 1;
	n = strlen(s);
	p = malloc(n * 3 / 4 + 4);
	if (!p)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int v = b64val(s[i]);

		if (v < 0) {
			free(p);
			return -1;
		}
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			p[o++] = (uint8_t)(acc >> bits);
		}
	}
	*payload = p;
	*plen = o;
	return 0;
}

static char *format(unsigned fmt, uint64_t digest, const uint8_t *p, size_t n)
{
	char *out = malloc(32 + (n * 4 + 2) / 3);
	size_t o;
	uint32_t acc = 0;
	int bits = 0;

	if (!out)
		return NULL;
	o = (size_t)sprintf(out, "NBT%u.%016llx.", fmt, (unsigned long long)digest);
	for (size_t i = 0; i < n; i++) {
		acc = (acc << 8) | p[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[o++] = b64[(acc >> bits) & 63];
		}
	}
	if (bits)
		out[o++] = b64[(acc << (6 - bits)) & 63];
	out[o] = 0;
	return out;
}

char *emu_table_corrupt(const char *text)
{
	uint64_t d;
	uint8_t *p;
	size_t n;
	char *out;

	if (!text || parse(text, &d, &p, &n))
		return NULL;
	if (n < 32) {		/* no entries to corrupt */
		free(p);
		return NULL;
	}
	p[24 + (n - 24) / 2] ^= 0x10;	/* inside shapes/entries, away from the header */
	out = format(1, d, p, n);	/* old digest: mismatch */
	free(p);
	return out;
}

char *emu_table_badver(const char *text)
{
	uint64_t d;
	uint8_t *p;
	size_t n;
	char *out;

	if (!text || parse(text, &d, &p, &n))
		return NULL;
	if (n < 24) {
		free(p);
		return NULL;
	}
	p[0] = 4;
	out = format(4, emu_digest(p, n), p, n);
	free(p);
	return out;
}

int emu_table_selfcheck(const char *text, char *err, size_t errlen)
{
	uint64_t d;
	uint8_t *p;
	size_t n;
	int rc = 0;

	if (parse(text, &d, &p, &n)) {
		snprintf(err, errlen, "table text does not parse as NBTn.<hex16>.<base64url>");
		return -1;
	}
	if (emu_digest(p, n) != d) {
		snprintf(err, errlen, "digest %016llx != FNV-1a+mix64 of payload %016llx",
			 (unsigned long long)d, (unsigned long long)emu_digest(p, n));
		rc = -1;
	} else if (n < 24 || p[0] < 1 || p[0] > 3 || (unsigned)(text[3] - '0') != p[0]) {
		snprintf(err, errlen, "payload too short or version byte %u not the prefix's (1, 2 or 3)",
			 n ? p[0] : 0);
		rc = -1;
	}
	free(p);
	return rc;
}

#ifndef EMU_NO_TABLE

int emu_table_available(void)
{
	return 1;
}

static unsigned bucket_of(uint64_t n)
{
	unsigned e = 63 - (unsigned)__builtin_clzll(n);

	return e < 2 ? 4 * e : 4 * e + (unsigned)((n >> (e - 2)) & 3);
}

char *emu_table_build(int policy, uint64_t seed, const struct emu_shape *shapes,
		      unsigned nshapes, char *err, size_t errlen)
{
	struct bot_table *t = calloc(1, sizeof(*t));
	uint64_t rng = seed ^ 0x7ab1e5eedULL ^ ((uint64_t)policy << 40);
	char *out = NULL;
	long len;
	int rc;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	bot_table_init(t, policy, seed);
	t->flags = BOT_TABLE_F_MEASURE | (policy == 11 ? BOT_TABLE_F_SHADOW : 0);
	t->min_bytes_log2 = 14;
	t->allow = EMU_TABLE_ALLOW;
	for (unsigned s = 0; s < nshapes; s++) {
		int si = bot_table_shape(t, shapes[s].nranks, shapes[s].nnodes);

		if (si < 0)
			goto fail_msg;
		for (int coll = 0; coll < EMU_NUM_FUNCS; coll++) {
			for (unsigned i = 0; i < EMU_NSIZES; i++) {
				uint64_t n = emu_size(i);
				float cost[EMU_NUM_ARMS];
				int sup[EMU_NUM_ARMS], nsup = 0;
				struct bot_table_entry *e;
				uint64_t r = emu_rand(&rng);
				unsigned np, lo;

				if (r % 10 == 0)
					continue;	/* left to the policy on the prior */
				emu_cost_table(coll, n, shapes[s].nnodes, cost);
				for (int a = 0; a < EMU_NUM_ARMS; a++)
					if (cost[a] >= 0)
						sup[nsup++] = a;
				e = &t->entries[t->nentries++];
				e->shape = (uint8_t)si;
				e->coll = (uint8_t)coll;
				e->bucket = (uint8_t)bucket_of(n);
				r = emu_rand(&rng);
				if (r % 10 == 0 || !nsup)
					e->plan.exploit = BOT_ARM_AUTO;
				else if (r % 10 == 1)
					e->plan.exploit = (uint8_t)((r >> 8) % EMU_NUM_ARMS);
				else
					e->plan.exploit = (uint8_t)sup[(r >> 8) % nsup];
				e->plan.nchannels = (r >> 20) % 10 < 7 ? 0 : (uint8_t)(1 + (r >> 24) % 32);
				np = (unsigned)((r >> 32) % 5);
				lo = 0;
				e->plan.nprobe = 0;
				for (unsigned k = 0; k < np && lo < 250; k++) {
					uint64_t q = emu_rand(&rng);
					unsigned a = lo + (unsigned)(q % 40);
					unsigned b = a + 1 + (unsigned)((q >> 8) % 48);
					struct bot_probe *pr = &e->plan.probe[e->plan.nprobe];

					if (b > 256)
						b = 256;
					if (a >= b)
						break;
					pr->lo = (uint16_t)a;
					pr->hi = (uint16_t)b;
					/* a probe of AUTO (255: left to NCCL, as the
					 * budgeted policies write AUTO's own arm) in 1
					 * of 8 */
					pr->arm = (q >> 40) % 8 == 0 ? 255 :
						  nsup && (q >> 20) % 4 ? (uint8_t)sup[(q >> 24) % nsup]
									: (uint8_t)((q >> 24) % EMU_NUM_ARMS);
					e->plan.nprobe++;
					lo = b;
				}
			}
		}
	}
	for (int coll = 0; coll < EMU_NUM_FUNCS; coll++) {
		uint64_t r = emu_rand(&rng);
		struct bot_table_corr *c = &t->corr[t->ncorr++];

		c->coll = (uint8_t)coll;
		c->arm = (uint8_t)(EMU_ALGO_RING * 3 + EMU_PROTO_SIMPLE);
		c->bpr_log2 = (uint8_t)(16 + r % 12);
		c->q16 = (uint32_t)(32768 + (r >> 16) % 98304);
	}
	rc = bot_table_normalize(t);
	if (rc) {
		snprintf(err, errlen, "bot_table_normalize: %s", bot_table_strerror(rc));
		goto out;
	}
	out = malloc(BOT_TABLE_MAX_TEXT + 1);
	if (!out)
		goto fail_msg;
	len = bot_table_encode(t, out, BOT_TABLE_MAX_TEXT + 1);
	if (len < 0) {
		snprintf(err, errlen, "bot_table_encode: %s", bot_table_strerror((int)len));
		free(out);
		out = NULL;
	}
	goto out;
fail_msg:
	snprintf(err, errlen, "table shape/entry limits or memory exhausted");
out:
	free(t);
	return out;
}

#else

int emu_table_available(void)
{
	return 0;
}

char *emu_table_build(int policy, uint64_t seed, const struct emu_shape *shapes,
		      unsigned nshapes, char *err, size_t errlen)
{
	(void)policy, (void)seed, (void)shapes, (void)nshapes;
	snprintf(err, errlen, "built without common/table.c (EMU_NO_TABLE)");
	return NULL;
}

#endif
