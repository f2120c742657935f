/*
 * driver.c - standalone main() for fuzz targets built without libFuzzer.
 *
 * Runs LLVMFuzzerTestOneInput on every file named on the command line (a
 * directory means its files, in name order; no argument means
 * $srcdir/tests/fuzz/corpus), then on FUZZ_ITERATIONS (default 20000)
 * mutants of those files: byte flips, CSV-flavoured byte writes, inserts,
 * deletes, chunk duplication and splices between files, drawn from a
 * fixed-seed xorshift64 (FUZZ_SEED), so every run does the same work. A
 * broken invariant aborts inside the target; otherwise this prints the
 * counts and exits 0.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MUT_MAX (128 * 1024)	/* mutants are cut to this size */

struct input {
	uint8_t *p;
	size_t n;
};

static struct input *inputs;
static size_t ninputs, cinputs;
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t xorshift64(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static size_t below(size_t n)
{
	return n ? (size_t)(xorshift64() % n) : 0;
}

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct input in = { NULL, 0 };
	size_t cap = 0, got;

	if (!f) {
		perror(path);
		exit(2);
	}
	do {
		if (in.n == cap) {
			cap = cap ? cap * 2 : 4096;
			in.p = realloc(in.p, cap);
			if (!in.p) {
				perror("realloc");
				exit(2);
			}
		}
		got = fread(in.p + in.n, 1, cap - in.n, f);
		in.n += got;
	} while (got > 0);
	if (ferror(f)) {
		perror(path);
		exit(2);
	}
	fclose(f);
	if (ninputs == cinputs) {
		cinputs = cinputs ? cinputs * 2 : 64;
		inputs = realloc(inputs, cinputs * sizeof(*inputs));
		if (!inputs) {
			perror("realloc");
			exit(2);
		}
	}
	inputs[ninputs++] = in;
}

static int skip_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static void add_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n;

	if (stat(path, &st) < 0) {
		perror(path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	n = scandir(path, &names, skip_dot, alphasort);
	if (n < 0) {
		perror(path);
		exit(2);
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(path) + strlen(names[i]->d_name) + 2;
		char *p = malloc(len);

		if (!p) {
			perror("malloc");
			exit(2);
		}
		snprintf(p, len, "%s/%s", path, names[i]->d_name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			add_file(p);
		free(p);
		free(names[i]);
	}
	free(names);
}

/* One mutation of buf (n bytes, room for MUT_MAX). Returns the new size. */
static size_t mutate(uint8_t *buf, size_t n)
{
	static const char csv[] = ",,,\n\n\r\"\"#-.e+0123456789 \t\xff" "\x00" "aAzZ_";
	const struct input *o;
	size_t at, k;

	switch (below(8)) {
	case 0:		/* flip a bit */
		if (n)
			buf[below(n)] ^= (uint8_t)(1u << below(8));
		break;
	case 1:		/* write a CSV-ish byte */
		if (n)
			buf[below(n)] = (uint8_t)csv[below(sizeof(csv) - 1)];
		break;
	case 2:		/* insert a CSV-ish byte */
		if (n < MUT_MAX) {
			at = below(n + 1);
			memmove(buf + at + 1, buf + at, n - at);
			buf[at] = (uint8_t)csv[below(sizeof(csv) - 1)];
			n++;
		}
		break;
	case 3:		/* delete a range */
		if (n) {
			at = below(n);
			k = 1 + below(n - at < 16 ? n - at : 16);
			memmove(buf + at, buf + at + k, n - at - k);
			n -= k;
		}
		break;
	case 4:		/* duplicate a chunk (often a whole row) */
		if (n) {
			uint8_t chunk[200];
			size_t to;

			at = below(n);
			k = 1 + below(n - at < sizeof(chunk) ? n - at : sizeof(chunk));
			if (k > sizeof(chunk) || n + k > MUT_MAX)
				break;
			memcpy(chunk, buf + at, k);
			to = below(n + 1);
			if (to > n)
				break;
			memmove(buf + to + k, buf + to, n - to);
			memcpy(buf + to, chunk, k);
			n += k;
		}
		break;
	case 5:		/* splice: tail from another input */
		o = &inputs[below(ninputs)];
		at = below(n + 1);
		k = below(o->n + 1);
		if (at + (o->n - k) > MUT_MAX)
			break;
		memcpy(buf + at, o->p + k, o->n - k);
		n = at + (o->n - k);
		break;
	case 6:		/* overwrite a digit run with an extreme number */
		if (n) {
			static const char *const nums[] = {
				"0", "-1", "-0", "1e308", "1e309", "4.9e-324", "1e-400",
				"18446744073709551616", "1099511627776", "1099511627777",
				"4294967295", "4294967296", "65535", "65536", "2147483648",
				"0.30000000000000004", "123456789.123456789", "", "auto", "AUTO",
			};
			const char *s = nums[below(sizeof(nums) / sizeof(nums[0]))];
			size_t sl = strlen(s);

			at = below(n);
			k = 0;
			while (at + k < n && buf[at + k] != ',' && buf[at + k] != '\n')
				k++;
			if (n - k + sl <= MUT_MAX) {
				memmove(buf + at + sl, buf + at + k, n - at - k);
				memcpy(buf + at, s, sl);
				n = n - k + sl;
			}
		}
		break;
	default:	/* swap two bytes */
		if (n > 1) {
			size_t a = below(n), b = below(n);
			uint8_t t = buf[a];

			buf[a] = buf[b];
			buf[b] = t;
		}
		break;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *srcdir = getenv("srcdir");
	const char *e;
	unsigned long iters = 20000;
	uint8_t *buf;
	size_t n;
	char def[4096];

	if ((e = getenv("FUZZ_ITERATIONS")))
		iters = strtoul(e, NULL, 10);
	if ((e = getenv("FUZZ_SEED")) && strtoull(e, NULL, 0))
		rng_state = strtoull(e, NULL, 0);
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			add_path(argv[i]);
	} else {
		snprintf(def, sizeof(def), "%s/tests/fuzz/corpus", srcdir ? srcdir : ".");
		add_path(def);
	}
	if (ninputs == 0) {
		fprintf(stderr, "%s: no corpus files\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < ninputs; i++)
		LLVMFuzzerTestOneInput(inputs[i].p, inputs[i].n);

	buf = malloc(MUT_MAX);
	if (!buf) {
		perror("malloc");
		return 2;
	}
	for (unsigned long it = 0; it < iters; it++) {
		const struct input *in = &inputs[below(ninputs)];
		int nmut = 1 + (int)below(4);

		n = in->n < MUT_MAX ? in->n : MUT_MAX;
		memcpy(buf, in->p, n);
		for (int m = 0; m < nmut; m++)
			n = mutate(buf, n);
		/* an exact-size copy lets ASan catch reads past the end */
		{
			uint8_t *exact = malloc(n ? n : 1);

			if (!exact) {
				perror("malloc");
				return 2;
			}
			memcpy(exact, buf, n);
			LLVMFuzzerTestOneInput(exact, n);
			free(exact);
		}
	}
	printf("%s: %zu corpus inputs and %lu mutants passed\n", argv[0], ninputs, iters);
	free(buf);
	for (size_t i = 0; i < ninputs; i++)
		free(inputs[i].p);
	free(inputs);
	return 0;
}
