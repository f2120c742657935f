/*
 * sim_calib.c - calibration of the measured model against real forced-arm
 * measurements (data/external/sweep), and the AUTO-error statistics.
 *
 * Two error measures, both on |natural log| so factors of two are 0.69:
 *  - absolute: predicted vs measured latency per row, on aws-g5-a10g (pure
 *    collective time);
 *  - arm ratio: per context, each arm's latency relative to the context's
 *    best measured arm, predicted vs measured. modal-a100 rows are iteration
 *    times with a matmul inside, so there a per-context constant (the
 *    median of measured - predicted over arms, >= 0) is added to every
 *    prediction first: only arm differences count.
 * The fit is a coordinate search over multiplicative steps of each free
 * parameter, minimising mean clipped absolute + ratio error. Its result is
 * frozen by hand in sim_model.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

struct crow {
	int slot, coll, arm;
	unsigned nnodes, nranks;
	uint64_t nbytes;
	double meas;		/* geometric mean of repeated rows */
	unsigned n;
};

static int crow_cmp(const void *a, const void *b)
{
	const struct crow *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot - y->slot;
	if (x->coll != y->coll)
		return x->coll - y->coll;
	if (x->nbytes != y->nbytes)
		return x->nbytes < y->nbytes ? -1 : 1;
	if (x->nnodes != y->nnodes)
		return x->nnodes < y->nnodes ? -1 : 1;
	if (x->nranks != y->nranks)
		return x->nranks < y->nranks ? -1 : 1;
	return x->arm - y->arm;
}

static int same_ctx(const struct crow *x, const struct crow *y)
{
	return x->slot == y->slot && x->coll == y->coll && x->nbytes == y->nbytes &&
	       x->nnodes == y->nnodes && x->nranks == y->nranks;
}

static int cal_slot(const char *fabric)
{
	if (!strcmp(fabric, "aws-g5-a10g"))
		return BOT_SIM_CAL_A10G;
	if (!strcmp(fabric, "modal-a100"))
		return BOT_SIM_CAL_MODAL;
	return -1;
}

/* A row the calibration measures with: a forced arm, measured, and not an
 * unsupported arm (auto_us -1: its measured_us is empty, NaN in memory, or
 * ignored as in the replay, doc/replay.md). */
static int cal_row(const struct bot_sweep_row *r)
{
	return r->algo >= 0 && r->proto >= 0 && r->auto_us != -1 && r->measured_us > 0;
}

/* Calibration rows of sw, repeated (context, arm) rows merged. */
static struct crow *collect(const struct bot_sweep *sw, size_t *np)
{
	struct crow *c = calloc(sw->nrows ? sw->nrows : 1, sizeof(*c));
	size_t i, n = 0, m = 0;

	if (!c)
		return NULL;
	for (i = 0; i < sw->nrows; i++) {
		const struct bot_sweep_row *r = &sw->rows[i];
		int slot = cal_slot(sw->fabrics[r->fabric]);

		if (slot < 0 || !cal_row(r))
			continue;
		c[n].slot = slot;
		c[n].coll = r->coll;
		c[n].arm = bot_arm(r->algo, r->proto);
		c[n].nnodes = r->nnodes;
		c[n].nranks = r->nranks;
		c[n].nbytes = r->nbytes;
		c[n].meas = log(r->measured_us);
		c[n].n = 1;
		n++;
	}
	qsort(c, n, sizeof(*c), crow_cmp);
	for (i = 0; i < n; i++) {
		if (m && same_ctx(&c[m - 1], &c[i]) && c[m - 1].arm == c[i].arm) {
			c[m - 1].meas += c[i].meas;
			c[m - 1].n++;
			continue;
		}
		c[m++] = c[i];
	}
	for (i = 0; i < m; i++)
		c[i].meas = exp(c[i].meas / c[i].n);
	*np = m;
	return c;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double quantile(double *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), dbl_cmp);
	k = (size_t)(q * (double)(n - 1) + 0.5);
	return v[k];
}

#define CLIP 1.3862943611198906	/* ln 4 */

static int calerr_rows(const struct crow *c, size_t n, const struct bot_sim_params *p,
		       struct bot_sim_calerr *e)
{
	double *pred = calloc(n ? n : 1, sizeof(double));
	double *ab = calloc(n ? n : 1, sizeof(double));
	double *ra = calloc(n ? n : 1, sizeof(double));
	double *tmp = calloc(n ? n : 1, sizeof(double));
	double sabs = 0, srat = 0;
	size_t i, j, k, na = 0, nr = 0;

	if (!pred || !ab || !ra || !tmp) {
		free(pred); free(ab); free(ra); free(tmp);
		return -1;
	}
	for (i = 0; i < n; i++)
		pred[i] = bot_sim_model_us(bot_sim_cal_fabric(c[i].slot), p, c[i].coll,
					   (double)c[i].nbytes, c[i].nnodes, c[i].nranks, c[i].arm);
	for (i = 0; i < n; i = j) {
		size_t best = i;
		double off = 0;

		for (j = i; j < n && same_ctx(&c[i], &c[j]); j++)
			if (c[j].meas < c[best].meas)
				best = j;
		if (c[i].slot == BOT_SIM_CAL_MODAL) {
			for (k = i; k < j; k++)
				tmp[k - i] = c[k].meas - pred[k];
			off = quantile(tmp, j - i, 0.5);
			if (off < 0)
				off = 0;
		} else {
			for (k = i; k < j; k++) {
				ab[na] = fabs(log(pred[k] / c[k].meas));
				sabs += fmin(ab[na], CLIP);
				na++;
			}
		}
		for (k = i; k < j; k++) {
			double pr, mr;

			if (k == best)
				continue;
			pr = log((pred[k] + off) / (pred[best] + off));
			mr = log(c[k].meas / c[best].meas);
			ra[nr] = fabs(pr - mr);
			srat += fmin(ra[nr], CLIP);
			nr++;
		}
	}
	e->nabs = (unsigned)na;
	e->nratio = (unsigned)nr;
	e->objective = (na ? sabs / na : 0) + (nr ? srat / nr : 0);
	e->abs_med = quantile(ab, na, 0.5);
	e->abs_p90 = quantile(ab, na, 0.9);
	e->ratio_med = quantile(ra, nr, 0.5);
	e->ratio_p90 = quantile(ra, nr, 0.9);
	free(pred); free(ab); free(ra); free(tmp);
	return 0;
}

int bot_sim_calerr(const struct bot_sweep *sw, const struct bot_sim_params *p,
		   struct bot_sim_calerr *e)
{
	size_t n;
	struct crow *c = collect(sw, &n);
	int rc;

	memset(e, 0, sizeof(*e));
	if (!c)
		return -1;
	rc = n ? calerr_rows(c, n, p, e) : -1;
	free(c);
	return rc;
}

/* Bounds keeping every parameter physical. */
static void clamp_param(unsigned i, double *v)
{
	static const double lo[BOT_SIM_NPARAMS] = { 0.05, 0.02, 0.5, 1, 1, 0.3, 0, 0, 0.05, 0.5, 1, 1, 0.01, 1 };
	static const double hi[BOT_SIM_NPARAMS] = { 20, 5, 40, 10, 4, 1.0, 8, 50, 20, 100, 2000, 500, 5, 2000 };

	if (*v < lo[i])
		*v = lo[i];
	if (*v > hi[i])
		*v = hi[i];
}

#define FIT_ROUNDS 8

void bot_sim_fit(const struct bot_sweep *sw, const struct bot_sim_params *start,
		 struct bot_sim_params *out,
		 void (*progress)(void *arg, uint64_t done, uint64_t total), void *arg)
{
	static const double steps[] = { 0.5, 0.7, 0.85, 0.93, 1.07, 1.18, 1.4, 2.0 };
	const unsigned nsteps = sizeof(steps) / sizeof(steps[0]);
	struct bot_sim_params cur = *start;
	struct bot_sim_calerr e;
	size_t n;
	struct crow *c = collect(sw, &n);
	double best;
	unsigned round, i, s, nfit = 0;
	uint64_t done = 0, total;

	*out = *start;
	if (!c || !n || calerr_rows(c, n, &cur, &e)) {
		free(c);
		return;
	}
	for (i = 0; i < BOT_SIM_NPARAMS; i++)
		nfit += bot_sim_param_fit[i] != 0;
	total = (uint64_t)FIT_ROUNDS * nfit * nsteps;
	if (progress)
		progress(arg, 0, total);
	best = e.objective;
	for (round = 0; round < FIT_ROUNDS; round++) {
		int moved = 0;

		for (i = 0; i < BOT_SIM_NPARAMS; i++) {
			if (!bot_sim_param_fit[i])
				continue;
			double v0 = *bot_sim_param_ref(&cur, i), bv = v0;

			for (s = 0; s < nsteps; s++) {
				double v = v0 * steps[s];

				if (v0 == 0)
					v = steps[s] - 0.5;
				clamp_param(i, &v);
				*bot_sim_param_ref(&cur, i) = v;
				if (!calerr_rows(c, n, &cur, &e) && e.objective < best - 1e-9) {
					best = e.objective;
					bv = v;
					moved = 1;
				}
				if (progress)
					progress(arg, ++done, total);
			}
			*bot_sim_param_ref(&cur, i) = bv;
		}
		if (!moved)
			break;
	}
	if (progress && done < total)
		progress(arg, total, total);	/* stopped early: nothing left to try */
	free(c);
	*out = cur;
}

/* Rows of one (fabric, context, arm) in file order: qsort's comparator over
 * row indices, the table passed through rep_sw (qsort has no argument).
 * rep_key orders by the rerun's identity alone; 0 means a rerun pair. */
static const struct bot_sweep *rep_sw;

static int rep_key(const struct bot_sweep_row *a, const struct bot_sweep_row *b)
{
	if (a->fabric != b->fabric)
		return a->fabric < b->fabric ? -1 : 1;
	if (a->coll != b->coll)
		return a->coll < b->coll ? -1 : 1;
	if (a->nbytes != b->nbytes)
		return a->nbytes < b->nbytes ? -1 : 1;
	if (a->nnodes != b->nnodes)
		return a->nnodes < b->nnodes ? -1 : 1;
	if (a->nranks != b->nranks)
		return a->nranks < b->nranks ? -1 : 1;
	if (a->algo != b->algo)
		return a->algo < b->algo ? -1 : 1;
	if (a->proto != b->proto)
		return a->proto < b->proto ? -1 : 1;
	return 0;
}

static int rep_cmp(const void *pa, const void *pb)
{
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	int c = rep_key(&rep_sw->rows[ia], &rep_sw->rows[ib]);

	return c ? c : (ia > ib) - (ia < ib);
}

double bot_sim_repeat_sigma(const struct bot_sweep *sw, unsigned *npairs)
{
	/* pairs of rows with the same (fabric, context, arm): reruns, each
	 * row with the next one of its arm. Sorted, not a scan per row: that
	 * was quadratic, minutes for a sweep of a few 100k rows. */
	double *d = calloc(sw->nrows ? sw->nrows : 1, sizeof(double));
	size_t *idx = calloc(sw->nrows ? sw->nrows : 1, sizeof(size_t));
	size_t i, m = 0, n = 0;
	double s;

	*npairs = 0;
	if (!d || !idx) {
		free(d);
		free(idx);
		return 0;
	}
	for (i = 0; i < sw->nrows; i++)
		if (cal_slot(sw->fabrics[sw->rows[i].fabric]) >= 0 && cal_row(&sw->rows[i]))
			idx[m++] = i;
	rep_sw = sw;
	qsort(idx, m, sizeof(*idx), rep_cmp);
	for (i = 0; i + 1 < m; i++) {
		const struct bot_sweep_row *a = &sw->rows[idx[i]], *b = &sw->rows[idx[i + 1]];

		if (rep_key(a, b) == 0)
			d[n++] = fabs(log(a->measured_us / b->measured_us));
	}
	free(idx);
	*npairs = (unsigned)n;
	/* |difference of two normals| has median 0.6745 * sqrt(2) * sigma */
	s = quantile(d, n, 0.5) / (0.6745 * 1.4142135623730951);
	free(d);
	return s;
}

double bot_sim_auto_wrong(const struct bot_fabric *f, unsigned lo, unsigned hi,
			  double margin, unsigned *n)
{
	unsigned ni, cnt = 0, wrong = 0;
	int coll;

	for (coll = 0; coll < BOT_NCOLL; coll++) {
		for (ni = 0; ni < bot_sim_default_nnodes; ni++) {
			unsigned nn = bot_sim_default_nodes[ni];
			uint64_t b;

			if (nn < lo || nn > hi || nn < f->min_nodes || nn > f->max_nodes)
				continue;
			for (b = 1024; b <= (4ULL << 30); b <<= 1) {
				float tab[BOT_NARMS];
				double best = -1, ta = -1;
				int arm, aa = -1;

				bot_sim_auto_table(f, coll, b, nn, tab);
				for (arm = 0; arm < BOT_NARMS; arm++) {
					double t;

					if (tab[arm] < 0)
						continue;
					if (aa < 0 || tab[arm] < tab[aa])
						aa = arm;
					t = bot_sim_model_us(f, &bot_sim_frozen, coll, (double)b, nn,
							     nn * f->gpn, arm);
					if (best < 0 || t < best)
						best = t;
				}
				if (aa < 0)
					continue;
				ta = bot_sim_model_us(f, &bot_sim_frozen, coll, (double)b, nn,
						      nn * f->gpn, aa);
				cnt++;
				if (ta > best * (1.0 + margin))
					wrong++;
			}
		}
	}
	*n = cnt;
	return cnt ? (double)wrong / cnt : 0;
}
