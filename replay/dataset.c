/*
 * dataset.c - group sweep rows into contexts the replay can score.
 *
 * The idea: sort row indices by (fabric, context key, row), so that each
 * context is one run of consecutive rows; walk the runs, collect samples per
 * arm, check that the rows agree with each other, and derive once what the
 * replay needs per context (trimmed arm means, the best arm, AUTO's arm and
 * cost, the prior). Nothing here depends on the order of the input beyond
 * the row order inside a context, so several files may be given in any
 * order of their rows.
 *
 * AUTO's choice, in order of preference (doc/replay.md):
 *   1. argmin of auto_us over the arms that carry one (NCCL's own rule);
 *   2. with no cost table in the rows (real measurements): the mean of the
 *      context's auto,auto rows (stock NCCL measured), arm unknown;
 *   3. else argmin of the simulator's cost table for the fabric, when that
 *      arm was measured; else the context is skipped (counted).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/dataset.h"
#include "policies/plan.h"
#include "sim/sim.h"

void bot_dataset_init(struct bot_dataset *ds)
{
	memset(ds, 0, sizeof(*ds));
}

static void ctx_free(struct bot_ds_ctx *c)
{
	for (int a = 0; a < BOT_NARMS; a++)
		free(c->arm[a].samples);
	free(c->auto_samples);
}

void bot_dataset_free(struct bot_dataset *ds)
{
	for (size_t i = 0; i < ds->nctx; i++)
		ctx_free(&ds->ctx[i]);
	free(ds->ctx);
	free(ds->fabrics);
	memset(ds, 0, sizeof(*ds));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bot_trimmed_mean(const double *x, size_t n, uint32_t *dropped)
{
	double small[64], *v = small, med, sum = 0;
	size_t kept = 0;

	if (dropped)
		*dropped = 0;
	if (n == 0)
		return NAN;
	if (n > sizeof(small) / sizeof(small[0])) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return NAN;
	}
	memcpy(v, x, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	med = v[(n - 1) / 2];
	for (size_t i = 0; i < n; i++) {
		if (v[i] < med / 4 || v[i] > med * 4)
			continue;
		sum += v[i];
		kept++;
	}
	if (v != small)
		free(v);
	if (dropped)
		*dropped = (uint32_t)(n - kept);
	return sum / (double)kept;	/* the median itself is always kept */
}

static int push_sample(double **v, uint32_t *n, uint32_t *cap, double x)
{
	if (*n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 8;
		double *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* FILE:LINE of a row. */
static void where(const struct bot_ds_files *files, const struct bot_sweep *sw, size_t row,
		  char *buf, size_t len)
{
	const char *name = "<generated>";

	if (files && files->name) {
		for (size_t i = 0; i < files->n; i++) {
			if (row < files->end[i]) {
				name = files->name[i];
				break;
			}
		}
	}
	if (sw->rows[row].line)
		snprintf(buf, len, "%s:%u", name, (unsigned)sw->rows[row].line);
	else
		snprintf(buf, len, "%s:row %zu", name, row + 1);
}

struct build {
	const struct bot_sweep *sw;
	const char (*fabrics)[BOT_SWEEP_FABRIC_MAX + 1];	/* by dataset fabric index */
	const struct bot_fabric *const *simf;	/* simulator's fabric, by dataset index */
	const struct bot_ds_files *files;
	const struct bot_ds_opts *opts;
	char *err;
	size_t errlen;
};

static int fail(struct build *b, size_t row, const struct bot_ds_ctx *c, const char *fmt,
		const char *a1, const char *a2)
{
	char at[256], ctx[64], msg[256];

	where(b->files, b->sw, row, at, sizeof(at));
	bot_ctx_format(c->key, ctx, sizeof(ctx));
	snprintf(msg, sizeof(msg), fmt, a1, a2);
	snprintf(b->err, b->errlen, "%s: %s (fabric %s, context %s)", at, msg,
		 b->fabrics[c->fabric], ctx);
	return -1;
}

static int cmp_name(const void *pa, const void *pb)
{
	const char *const *a = pa, *const *b = pb;

	return strcmp(*a, *b);
}

/* Number the fabrics in name order: rank[f] is the dataset index of the
 * sweep's fabric f, names[] and simf[] (the simulator's fabric of that
 * name, NULL if none) are by dataset index. A sort, not a count of the
 * smaller names per name: 65,536 names took 4.3 billion strcmp. The names
 * are distinct, so the order is the same. 0, or -1 on allocation failure. */
static int rank_fabrics(const struct bot_sweep *sw, uint16_t *rank,
			char (*names)[BOT_SWEEP_FABRIC_MAX + 1], const struct bot_fabric **simf)
{
	const char **by = malloc((sw->nfabrics ? sw->nfabrics : 1) * sizeof(*by));

	if (!by)
		return -1;
	for (size_t f = 0; f < sw->nfabrics; f++)
		by[f] = sw->fabrics[f];
	qsort(by, sw->nfabrics, sizeof(*by), cmp_name);
	for (size_t r = 0; r < sw->nfabrics; r++) {
		size_t f = (size_t)(by[r] - sw->fabrics[0]) / sizeof(sw->fabrics[0]);

		rank[f] = (uint16_t)r;
		memcpy(names[r], sw->fabrics[f], sizeof(names[r]));
		simf[r] = bot_sim_fabric_find(names[r]);
	}
	free(by);
	return 0;
}

/* A row's sort key: contexts become runs of consecutive entries. */
struct row_key {
	uint64_t key;
	size_t row;
	uint16_t fabric;
};

static uint64_t row_ctx_key(const struct bot_sweep_row *w)
{
	return bot_ctx_key((unsigned)w->coll, bot_size_bucket(w->nbytes), w->nranks, w->nnodes);
}

static int cmp_row(const void *pa, const void *pb)
{
	const struct row_key *a = pa, *b = pb;

	if (a->fabric != b->fabric)
		return a->fabric < b->fabric ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->row > b->row) - (a->row < b->row);
}

static int same_auto(double x, double y)
{
	if (isnan(x) || isnan(y))
		return isnan(x) && isnan(y);
	return x == y || fabs(x - y) <= 1e-9 * fabs(y);
}

/* The simulator's cost table for a context, or 0 when its fabric is unknown. */
static int sim_table(const struct build *b, const struct bot_ds_ctx *c, float out[BOT_NARMS])
{
	const struct bot_fabric *f = b->simf[c->fabric];

	if (!f && b->opts->prior_fabric)
		f = bot_sim_fabric_find(b->opts->prior_fabric);
	if (!f)
		return 0;
	bot_sim_auto_table(f, (int)bot_key_coll(c->key), c->nbytes, bot_key_nnodes(c->key), out);
	return 1;
}

static int argmin_ge0(const double v[BOT_NARMS])
{
	int best = -1;

	for (int a = 0; a < BOT_NARMS; a++)
		if (!isnan(v[a]) && v[a] >= 0 && (best < 0 || v[a] < v[best]))
			best = a;
	return best;
}

/* Derive best arm, AUTO and the prior. Returns 1 keep, 0 skip, -1 error. */
static int finish_ctx(struct build *b, struct bot_dataset *ds, struct bot_ds_ctx *c,
		      const size_t *rows, size_t nrows)
{
	double cost[BOT_NARMS];
	float sim[BOT_NARMS];
	int nforced = 0, nusable = 0, known = -1, unknown = -1, have_sim = 0;

	for (int a = 0; a < BOT_NARMS; a++) {
		struct bot_ds_arm *m = &c->arm[a];

		cost[a] = NAN;
		m->mean = NAN;
		if (!m->nrows)
			continue;
		nforced++;
		m->usable = m->n > 0 && m->auto_us != -1;
		if (m->usable) {
			nusable++;
			m->mean = bot_trimmed_mean(m->samples, m->n, &m->outliers);
			ds->outliers += m->outliers;
			if (!isnan(m->auto_us))
				known = a;
			else
				unknown = a;
		}
		if (!isnan(m->auto_us) && m->auto_us >= 0)
			cost[a] = m->auto_us;
	}
	if (c->nauto)
		c->auto_rows_mean = bot_trimmed_mean(c->auto_samples, c->nauto, NULL);
	else
		c->auto_rows_mean = NAN;
	if (nforced == 0) {
		ds->skipped_no_forced++;
		return 0;
	}
	if (nusable == 0)
		return fail(b, rows[0], c, "missing arms: no usable arm (every forced arm is unsupported, auto_us -1)%s%s",
			    "", "");
	if (known >= 0 && unknown >= 0) {
		size_t r = rows[0];

		for (size_t i = 0; i < nrows; i++) {
			const struct bot_sweep_row *w = &b->sw->rows[rows[i]];

			if (w->algo >= 0 && w->proto >= 0 && bot_arm(w->algo, w->proto) == unknown) {
				r = rows[i];
				break;
			}
		}
		return fail(b, r, c, "missing auto_us for %s while %s carries one",
			    bot_arm_name(unknown), bot_arm_name(known));
	}

	c->best_arm = -1;
	for (int a = 0; a < BOT_NARMS; a++)
		if (c->arm[a].usable && (c->best_arm < 0 || c->arm[a].mean < c->best_us)) {
			c->best_arm = a;
			c->best_us = c->arm[a].mean;
		}

	/* The prior source. */
	if (b->opts->prior == BOT_PRIOR_SIM || (b->opts->prior == BOT_PRIOR_DATA && known < 0))
		have_sim = sim_table(b, c, sim);

	/* AUTO. */
	if (known >= 0) {
		c->auto_arm = argmin_ge0(cost);
		c->auto_mean = c->arm[c->auto_arm].mean;
	} else if (c->nauto) {
		c->auto_arm = -1;
		c->auto_mean = c->auto_rows_mean;
	} else {
		float t[BOT_NARMS];
		double d[BOT_NARMS];
		int a;

		if (!have_sim && !sim_table(b, c, t)) {
			ds->skipped_auto_unknown++;
			return 0;
		}
		for (int i = 0; i < BOT_NARMS; i++)
			d[i] = have_sim ? sim[i] : t[i];
		a = argmin_ge0(d);
		if (a < 0 || !c->arm[a].usable) {
			ds->skipped_auto_unknown++;
			return 0;
		}
		c->auto_arm = a;
		c->auto_mean = c->arm[a].mean;
	}
	c->auto_loss = c->auto_mean / c->best_us - 1;
	c->best_all_us = c->best_us;
	c->unreachable = 0;

	/* The prior: only usable arms may be >= 0, so no policy picks an arm
	 * the replay has no measurement of. */
	c->has_prior = 0;
	for (int a = 0; a < BOT_NARMS; a++)
		c->prior[a] = -1;
	if (b->opts->prior == BOT_PRIOR_NONE)
		goto out;
	if (known >= 0 && b->opts->prior == BOT_PRIOR_DATA) {
		for (int a = 0; a < BOT_NARMS; a++)
			if (c->arm[a].usable)
				c->prior[a] = (float)c->arm[a].auto_us;
		c->has_prior = 1;
	} else if (have_sim) {
		for (int a = 0; a < BOT_NARMS; a++) {
			if (c->arm[a].usable && sim[a] >= 0) {
				c->prior[a] = sim[a];
				c->has_prior = 1;
			}
		}
		c->prior_from_sim = c->has_prior;
	}
out:
	if (c->prior_from_sim)
		ds->prior_sim++;
	if (!c->has_prior)
		ds->prior_none++;
	return 1;
}

/* A time the replay can compute with: losses are ratios of means and the
 * saved/lost totals products with call counts, so values that the sweep
 * format accepts but that overflow or underflow those (1e308, 1e-300) are
 * refused with the row named instead of printing inf% or nan. */
static int check_us(struct build *b, size_t r, const struct bot_ds_ctx *c, const char *col,
		    double us, double lo)
{
	char v[64], range[96];

	if (isnan(us) || (us >= lo && us <= BOT_DS_US_MAX))
		return 0;
	snprintf(v, sizeof(v), "%s %g", col, us);
	snprintf(range, sizeof(range), "%g..%g us", lo, BOT_DS_US_MAX);
	return fail(b, r, c, "%s is out of the range the replay computes with (%s)", v, range);
}

static int add_row(struct build *b, struct bot_dataset *ds, struct bot_ds_ctx *c, size_t r,
		   const size_t *first_of_arm)
{
	const struct bot_sweep_row *w = &b->sw->rows[r];
	struct bot_ds_arm *m;
	int arm;

	ds->rows++;
	if (check_us(b, r, c, "measured_us", w->measured_us, BOT_DS_US_MIN) ||
	    (w->auto_us != -1 && check_us(b, r, c, "auto_us", w->auto_us, 0)))
		return -1;
	if (w->algo < 0 && w->proto < 0) {
		if (isnan(w->measured_us))
			return 0;
		return push_sample(&c->auto_samples, &c->nauto, &c->auto_cap, w->measured_us);
	}
	if (w->algo < 0 || w->proto < 0) {
		ds->partial_rows++;
		return 0;
	}
	arm = bot_arm(w->algo, w->proto);
	m = &c->arm[arm];
	/* Within a size bucket, rows of different sizes carry different costs
	 * (the sweep reader has already checked each exact size): the context
	 * takes the cost of its smallest size, whatever the row order. Known
	 * and unknown costs may not mix. */
	if (first_of_arm[arm] != (size_t)-1 && !same_auto(m->auto_us, w->auto_us) &&
	    (w->nbytes == m->auto_nbytes || isnan(m->auto_us) != isnan(w->auto_us))) {
		char a1[64], a2[300];

		/* an empty (unknown) auto_us is NaN in memory: said "empty", as
		 * the sweep reader says it, not "nan" */
		if (isnan(w->auto_us))
			snprintf(a1, sizeof(a1), "empty");
		else if (snprintf(a1, sizeof(a1), "%.15g", w->auto_us) > 0 &&
			 strtod(a1, NULL) != w->auto_us)
			snprintf(a1, sizeof(a1), "%.17g", w->auto_us);	/* as written */
		where(b->files, b->sw, first_of_arm[arm], a2, sizeof(a2));
		snprintf(a2 + strlen(a2), sizeof(a2) - strlen(a2), " for %s", bot_arm_name(arm));
		return fail(b, r, c, "auto_us %s differs from the value given on %s (known and "
			    "empty auto_us may not mix within a context's arm)", a1, a2);
	}
	if (first_of_arm[arm] == (size_t)-1 || w->nbytes < m->auto_nbytes) {
		m->auto_us = w->auto_us;
		m->auto_nbytes = w->nbytes;
	}
	m->nrows++;
	if (w->auto_us == -1 || isnan(w->measured_us))
		return 0;	/* unsupported: any measurement is ignored */
	return push_sample(&m->samples, &m->n, &m->cap, w->measured_us) ? -2 : 0;
}

static int grow(struct bot_dataset *ds)
{
	if (ds->nctx == ds->cap) {
		size_t nc = ds->cap ? ds->cap * 2 : 256;
		struct bot_ds_ctx *n = realloc(ds->ctx, nc * sizeof(*n));

		if (!n)
			return -1;
		ds->ctx = n;
		ds->cap = nc;
	}
	return 0;
}

int bot_dataset_build(struct bot_dataset *ds, const struct bot_sweep *sw,
		      const struct bot_ds_files *files, const struct bot_ds_opts *opts,
		      char *err, size_t errlen)
{
	struct build b = { sw, NULL, NULL, files, opts, err, errlen };
	struct row_key *rk;
	size_t *idx, i = 0;
	uint16_t *rank;
	const struct bot_fabric **simf;
	int rc = 0;

	err[0] = 0;
	ds->fabrics = calloc(sw->nfabrics ? sw->nfabrics : 1, sizeof(*ds->fabrics));
	idx = malloc((sw->nrows ? sw->nrows : 1) * sizeof(*idx));
	rk = malloc((sw->nrows ? sw->nrows : 1) * sizeof(*rk));
	rank = malloc((sw->nfabrics ? sw->nfabrics : 1) * sizeof(*rank));
	simf = malloc((sw->nfabrics ? sw->nfabrics : 1) * sizeof(*simf));
	/* Fabrics are numbered in name order, not in the order the files
	 * introduced them: the numbers key the replay's random draws and the
	 * context order, so the order of --data files must not matter. */
	if (!ds->fabrics || !idx || !rk || !rank || !simf ||
	    rank_fabrics(sw, rank, ds->fabrics, simf)) {
		free(idx);
		free(rk);
		free(rank);
		free(simf);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ds->nfabrics = sw->nfabrics;
	b.fabrics = (const char (*)[BOT_SWEEP_FABRIC_MAX + 1])ds->fabrics;
	b.simf = simf;
	for (size_t r = 0; r < sw->nrows; r++) {
		rk[r].key = row_ctx_key(&sw->rows[r]);
		rk[r].row = r;
		rk[r].fabric = rank[sw->rows[r].fabric];
	}
	qsort(rk, sw->nrows, sizeof(*rk), cmp_row);
	for (size_t r = 0; r < sw->nrows; r++)
		idx[r] = rk[r].row;
	free(rk);

	while (i < sw->nrows && rc == 0) {
		const struct bot_sweep_row *w0 = &sw->rows[idx[i]];
		uint64_t key = row_ctx_key(w0);
		size_t first_of_arm[BOT_NARMS], j = i;
		struct bot_ds_ctx *c;
		int k;

		if (grow(ds)) {
			rc = -2;
			break;
		}
		c = &ds->ctx[ds->nctx];
		memset(c, 0, sizeof(*c));
		c->fabric = rank[w0->fabric];
		c->key = key;
		c->nccl_nodes = bot_sim_nccl_nodes(simf[c->fabric], bot_key_nnodes(key));
		c->nbytes = w0->nbytes;
		c->row = (uint32_t)idx[i];
		for (int a = 0; a < BOT_NARMS; a++) {
			c->arm[a].auto_us = NAN;
			first_of_arm[a] = (size_t)-1;
		}
		for (; j < sw->nrows; j++) {
			const struct bot_sweep_row *w = &sw->rows[idx[j]];

			if (w->fabric != w0->fabric || row_ctx_key(w) != key)
				break;
			rc = add_row(&b, ds, c, idx[j], first_of_arm);
			if (rc)
				break;
			if (w->algo >= 0 && w->proto >= 0 && first_of_arm[bot_arm(w->algo, w->proto)] == (size_t)-1)
				first_of_arm[bot_arm(w->algo, w->proto)] = idx[j];
		}
		if (rc == 0) {
			k = finish_ctx(&b, ds, c, idx + i, j - i);
			if (k < 0)
				rc = -1;
			else if (k == 1)
				ds->nctx++;
			else
				ctx_free(c);
		}
		if (rc)
			ctx_free(c);
		i = j;
	}
	free(idx);
	free(rank);
	free(simf);
	if (rc == -2)
		snprintf(err, errlen, "out of memory");
	return rc ? -1 : 0;
}

double bot_ds_arm_loss(const struct bot_ds_ctx *c, int arm)
{
	if (arm >= 0 && arm < BOT_NARMS && c->arm[arm].usable)
		return c->arm[arm].mean / c->best_us - 1;
	return c->auto_loss;
}

int bot_ds_effective_arm(const struct bot_ds_ctx *c, int arm)
{
	if (arm >= 0 && arm < BOT_NARMS && c->arm[arm].usable)
		return arm;
	return c->auto_arm;
}

double bot_ds_arm_us(const struct bot_ds_ctx *c, int arm)
{
	if (arm >= 0 && arm < BOT_NARMS && c->arm[arm].usable)
		return c->arm[arm].mean;
	return c->auto_mean;
}

size_t bot_dataset_rebase(struct bot_dataset *ds, uint32_t allow)
{
	size_t n = 0;

	for (size_t i = 0; i < ds->nctx; i++) {
		struct bot_ds_ctx *c = &ds->ctx[i];
		int best = -1;

		if (c->auto_arm < 0)
			continue;
		for (int a = 0; a < BOT_NARMS; a++)
			/* reachable: allowed, and measurable where it is not AUTO's
			 * own (a policy never forces what ranks cannot measure) */
			if (c->arm[a].usable && bot_arm_allowed(a, c->auto_arm, allow) &&
			    (a == c->auto_arm || bot_arm_measurable(a, c->nccl_nodes)) &&
			    (best < 0 || c->arm[a].mean < c->arm[best].mean))
				best = a;
		if (best < 0)
			continue;	/* cannot happen: AUTO's own arm is allowed */
		c->unreachable = best != c->best_arm;
		n += (size_t)c->unreachable;
		c->best_arm = best;
		c->best_us = c->arm[best].mean;
		c->auto_loss = c->auto_mean / c->best_us - 1;
	}
	return n;
}
