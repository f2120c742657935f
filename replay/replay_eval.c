/*
 * replay_eval.c - split, tune, carry history, score, test against AUTO.
 *
 * For each policy:
 *   1. tune: every point of bot_policy_grid() runs the mode's protocol on
 *      the training contexts (at most tune_contexts of them, an even stride
 *      through the sorted list), each from empty knowledge; the point with
 *      the lowest objective mean + p99/4 + harmed wins (ties: the earlier
 *      point): users pay for the mean and notice the tail, and a point that
 *      buys a lower training mean with less exploration does not generalise
 *      to larger scales, where AUTO's errors grow; harmed is the share of
 *      the contexts whose run loss exceeds AUTO's by more than 2 points
 *      (each weighs as a context 100 points worse), so that a point that
 *      explores more only wins where it harms no more; the policy's
 *      defaults (one of the grid's points) stand unless a point's objective
 *      is lower by more than BOT_REPLAY_TUNE_MARGIN: on a few hundred
 *      training contexts smaller wins are noise, and on bench/replay's
 *      seeds they did not carry to the test scales (doc/replay.md);
 *   2. history: with the chosen point, the policy runs on every training
 *      context, and the knowledge base it ends with is the cluster's state
 *      when the large jobs arrive;
 *   3. score: the policy runs on the test contexts from that state.
 * opts.budget (when set) replaces the safe-exploration budget of every
 * budgeted policy at every step, grid points included: bot_policy_grid()
 * hands out the defaults' budget, and a budget chosen on the command line
 * is what is being measured, not a parameter to tune.
 * Leaving one fabric out (opts.holdout), step 1 uses the other fabrics'
 * training contexts only, steps 2 and 3 the held-out fabric's: parameters
 * never see the fabric they are scored on, its own cluster history may.
 * Each of these runs is an independent task writing its own slots, so the
 * pool of threads changes the wall time and nothing else.
 *
 * Paired tests: a scenario is one (fabric, collective, nnodes) of the test
 * split; its pairs are the per-context run losses of the policy and of AUTO
 * (one pair per size bucket and rank count). One paired sign-flip test of
 * the mean per (policy, scenario), Holm-corrected across a policy's scenarios.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay/replay.h"

struct task {
	int kind;		/* 0 tune point, 1 history + score */
	size_t pol;		/* index into ev->pol */
	unsigned point;		/* grid point (tune) */
	struct bot_policy policy;
	double mean, p99, harmed;	/* tune result (harmed: share of contexts) */
	int rc;
	char err[256];
};

struct pool {
	struct bot_eval *ev;
	struct task *t;
	size_t n, next;
	pthread_mutex_t lock;
};

static struct bot_kb **kbs_new(size_t n)
{
	struct bot_kb **k = calloc(n ? n : 1, sizeof(*k));

	if (!k)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		k[i] = bot_kb_new();
		if (!k[i]) {
			for (size_t j = 0; j < i; j++)
				bot_kb_free(k[j]);
			free(k);
			return NULL;
		}
	}
	return k;
}

static void kbs_free(struct bot_kb **k, size_t n)
{
	if (!k)
		return;
	for (size_t i = 0; i < n; i++)
		bot_kb_free(k[i]);
	free(k);
}

/* Training contexts used in tuning: all, or an even stride. */
static size_t tune_subset(const struct bot_eval *ev, size_t *out)
{
	size_t want = ev->opts.tune_contexts;

	if (!want || want >= ev->ntuneset) {
		memcpy(out, ev->tuneset, ev->ntuneset * sizeof(*out));
		return ev->ntuneset;
	}
	for (size_t i = 0; i < want; i++)
		out[i] = ev->tuneset[i * ev->ntuneset / want];
	return want;
}

static int summarize_policy(struct bot_eval *ev, struct bot_policy_result *pr);

/* Progress: every run reports the contexts it planned per round; the
 * evaluation adds them up against the total it announced. */
static void progress_add(void *arg, uint64_t contexts)
{
	struct bot_eval *ev = arg;
	double frac;

	pthread_mutex_lock(&ev->progress_lock);
	ev->progress_done += contexts;
	frac = ev->progress_total ? (double)ev->progress_done / (double)ev->progress_total : 1.0;
	ev->opts.progress(ev->opts.progress_arg, frac > 1 ? 1 : frac);
	pthread_mutex_unlock(&ev->progress_lock);
}

/* The run options of a task: progress routed through the evaluation. */
static struct bot_replay_opts task_opts(struct bot_eval *ev)
{
	struct bot_replay_opts ro = ev->opts.run;

	ro.progress = ev->opts.progress ? progress_add : NULL;
	ro.progress_arg = ev;
	return ro;
}

static void run_task(struct bot_eval *ev, struct task *t)
{
	const struct bot_dataset *ds = ev->ds;
	struct bot_kb **kbs = kbs_new(ds->nfabrics);
	struct bot_ctx_result *res = NULL;

	t->rc = -1;
	if (!kbs)
		goto oom;
	if (t->kind == 0) {
		size_t *sub = malloc((ev->ntuneset ? ev->ntuneset : 1) * sizeof(*sub)), n;
		double *l;
		struct bot_summary s;

		res = calloc(ev->ntuneset ? ev->ntuneset : 1, sizeof(*res));
		l = malloc((ev->ntuneset ? ev->ntuneset : 1) * sizeof(*l));
		if (!sub || !res || !l) {
			free(sub);
			free(l);
			goto oom;
		}
		struct bot_replay_opts ro = task_opts(ev);

		n = tune_subset(ev, sub);
		t->rc = bot_replay_run(ds, sub, n, &t->policy, &ro, kbs, res, t->err, sizeof(t->err));
		t->harmed = 0;
		for (size_t i = 0; i < n; i++) {
			l[i] = res[i].run_loss;
			t->harmed += res[i].run_loss - ev->ds->ctx[sub[i]].auto_loss > BOT_HARM_MARGIN;
		}
		bot_summarize(l, NULL, n, &s);
		t->mean = s.mean;
		t->p99 = s.p99;
		t->harmed = n ? t->harmed / (double)n : 0;
		free(sub);
		free(l);
	} else {
		struct bot_policy_result *pr = &ev->pol[t->pol];
		struct bot_replay_opts ro = task_opts(ev);

		if (ev->opts.history && ev->ntrain) {
			res = calloc(ev->ntrain, sizeof(*res));
			if (!res)
				goto oom;
			t->rc = bot_replay_run(ds, ev->train, ev->ntrain, &pr->pol, &ro, kbs, res,
					       t->err, sizeof(t->err));
			if (t->rc)
				goto out;
		}
		ro.frozen = pr->pol.id == BOT_POLICY_FROZEN;
		t->rc = bot_replay_run(ds, ev->test, ev->ntest, &pr->pol, &ro, kbs, pr->res,
				       t->err, sizeof(t->err));
		/* The summary and its permutation tests belong to this task too,
		 * so that they run on the pool's threads. */
		if (!t->rc && summarize_policy(ev, pr))
			goto oom;
	}
	goto out;
oom:
	snprintf(t->err, sizeof(t->err), "out of memory");
out:
	free(res);
	kbs_free(kbs, ds->nfabrics);
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->lock);
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		run_task(p->ev, &p->t[i]);
	}
}

static void run_pool(struct bot_eval *ev, struct task *t, size_t n)
{
	struct pool p = { ev, t, n, 0, PTHREAD_MUTEX_INITIALIZER };
	unsigned nth = ev->opts.threads ? ev->opts.threads : 1;
	pthread_t *th;
	unsigned started = 0;

	if (nth > n)
		nth = (unsigned)n;
	th = calloc(nth ? nth : 1, sizeof(*th));
	for (unsigned i = 1; th && i < nth; i++)
		if (!pthread_create(&th[i], NULL, worker, &p))
			started = i;
	worker(&p);	/* this thread works too; and alone if threads could not start */
	for (unsigned i = 1; th && i <= started; i++)
		pthread_join(th[i], NULL);
	free(th);
	pthread_mutex_destroy(&p.lock);
}

static int first_error(struct task *t, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (t[i].rc) {
			snprintf(err, errlen, "%s", t[i].err[0] ? t[i].err : "replay failed");
			return -1;
		}
	}
	return 0;
}

/* The run's settings on a policy's parameters: opts.budget, when set,
 * for a policy that has a budget (the -free variants' is INFINITY). */
static void apply_opts(const struct bot_eval_opts *o, struct bot_policy *p)
{
	if (o->budget_set && isfinite(p->par.budget))
		p->par.budget = o->budget;
}

/* What tuning minimises on the training split (see the file comment). */
double bot_replay_tune_objective(double mean, double p99, double harmed)
{
	return mean + p99 / 4 + harmed;
}

unsigned bot_replay_tune_pick(const double *obj, unsigned n, int dflt)
{
	unsigned best = 0;

	for (unsigned i = 1; i < n; i++)
		if (obj[i] < obj[best])
			best = i;
	if (dflt >= 0 && (unsigned)dflt < n &&
	    !(obj[best] < (1 - BOT_REPLAY_TUNE_MARGIN) * obj[dflt]))
		return (unsigned)dflt;
	return best;
}

/* Tune every policy (or take its defaults). */
static int tune(struct bot_eval *ev, char *err, size_t errlen)
{
	struct task *t = NULL;
	size_t nt = 0, cap = 0;
	int rc = 0;

	for (size_t k = 0; k < ev->npol; k++) {
		struct bot_policy_params par;

		if (!ev->opts.tune || !ev->ntuneset)
			continue;
		for (unsigned i = 0; !bot_policy_grid(ev->pol[k].pol.id, i, &par); i++) {
			if (nt == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct task *n = realloc(t, nc * sizeof(*n));

				if (!n) {
					free(t);
					snprintf(err, errlen, "out of memory");
					return -1;
				}
				t = n;
				cap = nc;
			}
			memset(&t[nt], 0, sizeof(t[nt]));
			t[nt].kind = 0;
			t[nt].pol = k;
			t[nt].point = i;
			t[nt].policy = ev->pol[k].pol;
			t[nt].policy.par = par;
			apply_opts(&ev->opts, &t[nt].policy);
			nt++;
			ev->pol[k].grid_points = i + 1;
		}
	}
	if (!nt)
		return 0;
	{
		size_t sub = ev->opts.tune_contexts && ev->opts.tune_contexts < ev->ntuneset ?
			     ev->opts.tune_contexts : ev->ntuneset;

		ev->progress_total += (uint64_t)nt * sub * bot_replay_rounds(&ev->opts.run);
	}
	run_pool(ev, t, nt);
	rc = first_error(t, nt, err, errlen);
	/* one policy's points are t[first .. first + grid_points), in order */
	for (size_t first = 0; first < nt && !rc;) {
		struct bot_policy_result *pr = &ev->pol[t[first].pol];
		unsigned n = pr->grid_points, pick;
		double *obj = malloc(n * sizeof(*obj));
		int dflt = -1;

		if (!obj) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		for (unsigned i = 0; i < n; i++) {
			const struct task *x = &t[first + i];

			obj[i] = bot_replay_tune_objective(x->mean, x->p99, x->harmed);
			if (dflt < 0 && !memcmp(&x->policy.par, &pr->pol.par, sizeof(pr->pol.par)))
				dflt = (int)i;
		}
		pick = bot_replay_tune_pick(obj, n, dflt);
		free(obj);
		pr->pol = t[first + pick].policy;
		pr->grid_chosen = pick;
		pr->tune_mean = t[first + pick].mean;
		pr->tune_p99 = t[first + pick].p99;
		pr->tune_harmed = t[first + pick].harmed;
		first += n;
	}
	free(t);
	return rc;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

/* Group the (sorted) test contexts into scenarios. */
static int scenarios(struct bot_eval *ev)
{
	const struct bot_dataset *ds = ev->ds;
	size_t *order = malloc((ev->ntest ? ev->ntest : 1) * sizeof(*order));

	ev->scen = calloc(ev->ntest ? ev->ntest : 1, sizeof(*ev->scen));
	if (!order || !ev->scen) {
		free(order);
		return -1;
	}
	/* Contexts sort by fabric then key (collective, bucket, nnodes, nranks),
	 * so a scenario is not contiguous across sizes: sort a permutation by
	 * (fabric, collective, nnodes) and keep the test list in that order. */
	for (size_t i = 0; i < ev->ntest; i++) {
		const struct bot_ds_ctx *c = &ds->ctx[ev->test[i]];

		order[i] = ((size_t)c->fabric << 48) | ((size_t)bot_key_coll(c->key) << 40) |
			   ((size_t)bot_key_nnodes(c->key) << 20) | i;
	}
	qsort(order, ev->ntest, sizeof(*order), cmp_size);
	for (size_t i = 0; i < ev->ntest; i++)
		order[i] = ev->test[order[i] & 0xfffff];
	memcpy(ev->test, order, ev->ntest * sizeof(*order));
	free(order);
	ev->nscen = 0;
	for (size_t i = 0; i < ev->ntest; i++) {
		const struct bot_ds_ctx *c = &ds->ctx[ev->test[i]];
		struct bot_scenario *s = ev->nscen ? &ev->scen[ev->nscen - 1] : NULL;

		if (!s || s->fabric != c->fabric || s->coll != bot_key_coll(c->key) ||
		    s->nnodes != bot_key_nnodes(c->key)) {
			s = &ev->scen[ev->nscen++];
			s->fabric = c->fabric;
			s->coll = (uint8_t)bot_key_coll(c->key);
			s->nnodes = bot_key_nnodes(c->key);
			s->first = i;
		}
		s->n++;
	}
	return 0;
}

static int summarize_policy(struct bot_eval *ev, struct bot_policy_result *pr)
{
	const struct bot_dataset *ds = ev->ds;
	size_t n = ev->ntest;
	double *run = malloc((n ? n : 1) * sizeof(*run)), *fin = malloc((n ? n : 1) * sizeof(*fin));
	double *d = malloc((n ? n : 1) * sizeof(*d)), *e = malloc((n ? n : 1) * sizeof(*e));
	double *p = calloc(ev->nscen ? ev->nscen : 1, sizeof(*p));
	double *al = malloc((n ? n : 1) * sizeof(*al)), *fal = malloc((n ? n : 1) * sizeof(*fal));
	struct bot_ctx_result *fres = malloc((n ? n : 1) * sizeof(*fres));
	int rc = -1;

	pr->fabric = calloc(ds->nfabrics ? ds->nfabrics : 1, sizeof(*pr->fabric));
	pr->p_adj = calloc(ev->nscen ? ev->nscen : 1, sizeof(*pr->p_adj));
	pr->direction = calloc(ev->nscen ? ev->nscen : 1, sizeof(*pr->direction));
	if (!run || !fin || !d || !e || !p || !al || !fal || !fres || !pr->fabric || !pr->p_adj ||
	    !pr->direction)
		goto out;
	for (size_t i = 0; i < n; i++) {
		run[i] = pr->res[i].run_loss;
		fin[i] = pr->res[i].final_loss;
		al[i] = ds->ctx[ev->test[i]].auto_loss;
	}
	bot_summarize(run, fin, n, &pr->all);
	bot_summarize_harm(pr->res, al, n, &pr->all);
	for (size_t f = 0; f < ds->nfabrics; f++) {
		size_t m = 0;

		for (size_t k = ev->fabric_first[f]; k < ev->fabric_first[f + 1]; k++) {
			size_t i = ev->fabric_pos[k];

			d[m] = run[i];
			e[m] = fin[i];
			fres[m] = pr->res[i];
			fal[m] = al[i];
			m++;
		}
		bot_summarize(d, e, m, &pr->fabric[f]);
		bot_summarize_harm(fres, fal, m, &pr->fabric[f]);
	}
	for (size_t s = 0; s < ev->nscen; s++) {
		const struct bot_scenario *sc = &ev->scen[s];

		for (size_t i = 0; i < sc->n; i++) {
			const struct bot_ds_ctx *c = &ds->ctx[ev->test[sc->first + i]];

			d[i] = run[sc->first + i] - c->auto_loss;
		}
		p[s] = (ev->opts.run.reference ? bot_signflip_reference : bot_signflip)(
			d, sc->n, bot_mix64(ev->opts.run.seed ^ s), &pr->direction[s]);
	}
	bot_holm(p, ev->nscen, pr->p_adj);
	pr->better = pr->worse = 0;
	for (size_t s = 0; s < ev->nscen; s++) {
		if (pr->p_adj[s] >= ev->opts.alpha)
			continue;
		if (pr->direction[s] < 0)
			pr->better++;
		else if (pr->direction[s] > 0)
			pr->worse++;
	}
	rc = 0;
out:
	free(run);
	free(fin);
	free(d);
	free(e);
	free(p);
	free(al);
	free(fal);
	free(fres);
	return rc;
}

/* Index the test list by fabric (a stable counting sort: each fabric's
 * positions in test order), so that the per-fabric summaries cost the test
 * contexts once, not once per fabric (65,536 fabrics: 65,536 passes). */
static int by_fabric(struct bot_eval *ev)
{
	const struct bot_dataset *ds = ev->ds;
	size_t nf = ds->nfabrics;

	ev->fabric_contexts = calloc(nf ? nf : 1, sizeof(*ev->fabric_contexts));
	ev->fabric_first = calloc(nf + 1, sizeof(*ev->fabric_first));
	ev->fabric_pos = malloc((ev->ntest ? ev->ntest : 1) * sizeof(*ev->fabric_pos));
	if (!ev->fabric_contexts || !ev->fabric_first || !ev->fabric_pos)
		return -1;
	for (size_t i = 0; i < ev->ntest; i++)
		ev->fabric_contexts[ds->ctx[ev->test[i]].fabric]++;
	for (size_t f = 0; f < nf; f++)
		ev->fabric_first[f + 1] = ev->fabric_first[f] + ev->fabric_contexts[f];
	for (size_t f = 0; f < nf; f++)
		ev->fabric_contexts[f] = 0;
	for (size_t i = 0; i < ev->ntest; i++) {
		size_t f = ds->ctx[ev->test[i]].fabric;

		ev->fabric_pos[ev->fabric_first[f] + ev->fabric_contexts[f]++] = i;
	}
	return 0;
}

static int summarize_auto(struct bot_eval *ev)
{
	const struct bot_dataset *ds = ev->ds;
	double *v = malloc((ev->ntest ? ev->ntest : 1) * sizeof(*v));

	ev->auto_fabric = calloc(ds->nfabrics ? ds->nfabrics : 1, sizeof(*ev->auto_fabric));
	if (!v || !ev->auto_fabric) {
		free(v);
		return -1;
	}
	for (size_t i = 0; i < ev->ntest; i++)
		v[i] = ds->ctx[ev->test[i]].auto_loss;
	bot_summarize(v, NULL, ev->ntest, &ev->auto_all);
	for (size_t f = 0; f < ds->nfabrics; f++) {
		size_t m = 0;

		for (size_t k = ev->fabric_first[f]; k < ev->fabric_first[f + 1]; k++)
			v[m++] = ds->ctx[ev->test[ev->fabric_pos[k]]].auto_loss;
		bot_summarize(v, NULL, m, &ev->auto_fabric[f]);
	}
	free(v);
	return 0;
}

/* The node counts of the data's contexts, "1,2,4" (ascending, cut with
 * ",..." where buf ends): what a --test-nodes that selects nothing could
 * have named. */
static const char *data_nodes(const struct bot_dataset *ds, char *buf, size_t len)
{
	uint8_t seen[65536 / 8] = { 0 };
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ds->nctx; i++) {
		uint32_t n = bot_key_nnodes(ds->ctx[i].key);

		seen[n >> 3] |= (uint8_t)(1u << (n & 7));
	}
	for (uint32_t n = 0; n < 65536; n++) {
		char one[16];
		int k;

		if (!(seen[n >> 3] & (1u << (n & 7))))
			continue;
		k = snprintf(one, sizeof(one), "%s%u", o ? "," : "", (unsigned)n);
		if (o + (size_t)k + 5 > len) {
			snprintf(buf + o, len - o, ",...");
			break;
		}
		memcpy(buf + o, one, (size_t)k + 1);
		o += (size_t)k;
	}
	return o ? buf : "none";
}

int bot_eval_run(const struct bot_dataset *ds, const struct bot_eval_opts *o,
		 struct bot_eval *ev, char *err, size_t errlen)
{
	struct timespec t0, t1;
	struct task *t = NULL;
	char set[128], have[160];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(ev, 0, sizeof(*ev));
	pthread_mutex_init(&ev->progress_lock, NULL);
	ev->ds = ds;
	ev->opts = *o;
	ev->test = malloc((ds->nctx ? ds->nctx : 1) * sizeof(*ev->test));
	ev->train = malloc((ds->nctx ? ds->nctx : 1) * sizeof(*ev->train));
	ev->tuneset = malloc((ds->nctx ? ds->nctx : 1) * sizeof(*ev->tuneset));
	ev->pol = calloc(o->npolicies ? o->npolicies : 1, sizeof(*ev->pol));
	if (!ev->test || !ev->train || !ev->tuneset || !ev->pol)
		goto oom;
	for (size_t i = 0; i < ds->nctx; i++) {
		uint32_t nodes = bot_key_nnodes(ds->ctx[i].key);
		int held = !o->lofo || ds->ctx[i].fabric == o->holdout;

		if (bot_nodeset_has(&o->test, nodes) && held)
			ev->test[ev->ntest++] = i;
		if (bot_nodeset_has(&o->train, nodes) && held)
			ev->train[ev->ntrain++] = i;
		if (bot_nodeset_has(&o->train, nodes) && (!o->lofo || !held))
			ev->tuneset[ev->ntuneset++] = i;
	}
	if (!ev->ntest) {
		bot_nodeset_format(&o->test, set, sizeof(set));
		if (o->lofo)
			snprintf(err, errlen, "held-out fabric %s has no context in the test split "
				 "(--test-nodes %s)", o->holdout < ds->nfabrics ?
				 ds->fabrics[o->holdout] : "?", set);
		else
			snprintf(err, errlen, "no context of the data is in the test split (--test-nodes "
				 "%s; the data's node counts: %s)", set, data_nodes(ds, have, sizeof(have)));
		return -1;
	}
	if (ev->ntest >= (1u << 20)) {
		snprintf(err, errlen, "too many test contexts (%zu)", ev->ntest);
		return -1;
	}
	if (scenarios(ev) || by_fabric(ev) || summarize_auto(ev))
		goto oom;

	ev->npol = o->npolicies;
	for (size_t k = 0; k < ev->npol; k++) {
		struct bot_policy_result *pr = &ev->pol[k];

		if (bot_policy_init(&pr->pol, bot_policy_name(o->policies[k]))) {
			snprintf(err, errlen, "unknown policy id %d", o->policies[k]);
			return -1;
		}
		pr->pol.allow = o->allow;
		apply_opts(o, &pr->pol);
		pr->res = calloc(ev->ntest, sizeof(*pr->res));
		if (!pr->res)
			goto oom;
	}
	/* Progress counts context-rounds: tuning's are added by tune(). */
	ev->progress_total = (uint64_t)ev->npol * ((o->history ? ev->ntrain : 0) + ev->ntest) *
			     bot_replay_rounds(&o->run);
	if (tune(ev, err, errlen))
		return -1;

	t = calloc(ev->npol ? ev->npol : 1, sizeof(*t));
	if (!t)
		goto oom;
	for (size_t k = 0; k < ev->npol; k++) {
		t[k].kind = 1;
		t[k].pol = k;
	}
	run_pool(ev, t, ev->npol);
	if (first_error(t, ev->npol, err, errlen)) {
		free(t);
		return -1;
	}
	free(t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ev->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

void bot_eval_free(struct bot_eval *ev)
{
	for (size_t k = 0; ev->pol && k < ev->npol; k++) {
		free(ev->pol[k].res);
		free(ev->pol[k].fabric);
		free(ev->pol[k].p_adj);
		free(ev->pol[k].direction);
	}
	free(ev->pol);
	free(ev->test);
	free(ev->train);
	free(ev->tuneset);
	free(ev->auto_fabric);
	free(ev->fabric_contexts);
	free(ev->fabric_first);
	free(ev->fabric_pos);
	free(ev->scen);
	pthread_mutex_destroy(&ev->progress_lock);
	memset(ev, 0, sizeof(*ev));
}
