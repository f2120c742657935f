/*
 * replay_out.c - the replay's report: an aligned table for people, JSON and
 * CSV for scripts.
 *
 * Losses are fractions in JSON and CSV (0.05 = 5%) and percentages in the
 * table. AUTO's numbers do not depend on the mode (its choice is fixed), so
 * JSON has one top-level `auto` object and one `policies` entry per
 * (policy, mode), each naming its mode; the table and CSV repeat AUTO in
 * every mode's block for side-by-side reading.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "replay/replay.h"

static const char *const param_names[] = {
	"prior_weight", "prior_sd", "probe_frac", "epsilon", "ucb_c",
	"discount", "share", "plausible", "etc_rounds", "budget",
};
#define NPARAMS (sizeof(param_names) / sizeof(param_names[0]))

/* budget is INFINITY for the -free variants: "none" in the table and CSV,
 * null in JSON. */
static void param_values(const struct bot_policy_params *p, double v[NPARAMS])
{
	v[0] = p->prior_weight;
	v[1] = p->prior_sd;
	v[2] = p->probe_frac;
	v[3] = p->epsilon;
	v[4] = p->ucb_c;
	v[5] = p->discount;
	v[6] = p->share;
	v[7] = p->plausible;
	v[8] = p->etc_rounds;
	v[9] = p->budget;
}

/* The tuned parameters as "name=value ..." */
static void params_format(const struct bot_policy_params *p, char *buf, size_t len)
{
	double v[NPARAMS];
	size_t o = 0;

	param_values(p, v);
	buf[0] = 0;
	for (size_t i = 0; i < NPARAMS && o < len; i++)
		o += (size_t)(isfinite(v[i]) ?
			snprintf(buf + o, len - o, "%s%s=%g", i ? " " : "", param_names[i], v[i]) :
			snprintf(buf + o, len - o, "%s%s=none", i ? " " : "", param_names[i]));
}

/* ---- table ---- */

/* A loss as a percentage, right-aligned under its head's 9 characters
 * ("12.34%" ends where "mean" does; it ended one short): 0.00% for what
 * rounds to it (never -0.00%), and from 10000% on with an exponent
 * ("1.2e+04%") so a huge loss keeps the columns aligned. JSON and CSV keep
 * the exact value. */
static void pct_fmt(char *buf, size_t len, double x)
{
	double v = 100 * x;

	if (isnan(x))
		snprintf(buf, len, "-");
	else if (fabs(v) < 0.005)
		snprintf(buf, len, "0.00%%");
	else if (fabs(v) >= 9999.995)
		snprintf(buf, len, "%.1e%%", v);
	else
		snprintf(buf, len, "%.2f%%", v);
}

static void pct(FILE *f, double x)
{
	char buf[32];

	pct_fmt(buf, sizeof(buf), x);
	fprintf(f, " %9s", buf);
}

/* Seconds with a unit that keeps a few digits; what would print as 0.0us
 * is 0s, as an exact zero is. */
static void secs(FILE *f, double x)
{
	double a = fabs(x);

	if (isnan(x))
		fprintf(f, " %9s", "-");
	else if (a < 0.05e-6)
		fprintf(f, " %8ss", "0");
	else if (a >= 100)
		fprintf(f, " %8.0fs", x);
	else if (a >= 0.1)
		fprintf(f, " %8.2fs", x);
	else if (a >= 0.1e-3)
		fprintf(f, " %7.1fms", x * 1e3);
	else
		fprintf(f, " %7.1fus", x * 1e6);
}

static void table_row(FILE *f, const char *name, const struct bot_summary *s, const char *tail)
{
	fprintf(f, "  %-14s %8zu %6zu", name, s->contexts, s->over_10pct);
	pct(f, s->mean);
	pct(f, s->p50);
	pct(f, s->p90);
	pct(f, s->p99);
	pct(f, s->max);
	pct(f, s->final_mean);
	fprintf(f, " %6zu", s->harmed);
	pct(f, s->worst_excess);
	secs(f, s->saved);
	secs(f, s->lost);
	fprintf(f, "%s\n", tail ? tail : "");
}

static void table_head(FILE *f, int tests)
{
	fprintf(f, "  %-14s %8s %6s %9s %9s %9s %9s %9s %9s %6s %9s %9s %9s%s\n", "policy", "contexts",
		">10%", "mean", "p50", "p90", "p99", "max", "final", "harmed", "worst+", "saved", "lost",
		tests ? "  mean/AUTO  vs AUTO (better/worse of scenarios)" : "");
}

static void table_block(FILE *f, const struct bot_eval *ev, long fab)
{
	const struct bot_summary *a = fab < 0 ? &ev->auto_all : &ev->auto_fabric[fab];

	table_head(f, fab < 0);
	table_row(f, "AUTO", a, NULL);
	for (size_t k = 0; k < ev->npol; k++) {
		const struct bot_policy_result *pr = &ev->pol[k];
		const struct bot_summary *s = fab < 0 ? &pr->all : &pr->fabric[fab];
		char tail[128] = "";

		if (fab < 0) {
			char ratio[32];

			if (a->mean > 0)
				snprintf(ratio, sizeof(ratio), "%.3f", s->mean / a->mean);
			else
				snprintf(ratio, sizeof(ratio), "-");
			snprintf(tail, sizeof(tail), "  %9s  %zu/%zu of %zu", ratio, pr->better, pr->worse, ev->nscen);
		}
		table_row(f, bot_policy_name(pr->pol.id), s, tail);
	}
}

static const char *arm_label(int arm)
{
	return arm >= 0 && arm < BOT_NARMS ? bot_arm_name(arm) : "auto";
}

/* What --worst ranks a test context by: its run loss, or with --harmed its
 * run loss minus AUTO's. */
static double worst_key(const struct bot_eval *ev, const struct bot_policy_result *pr, size_t i)
{
	return pr->res[i].run_loss - (ev->opts.worst_excess ? ev->ds->ctx[ev->test[i]].auto_loss : 0);
}

/* The N test contexts where a policy lost most (or, --harmed, lost most
 * against AUTO), with what it ended on. */
static void print_worst(FILE *f, const struct bot_eval *ev, const struct bot_policy_result *pr)
{
	size_t n = ev->ntest, k = ev->opts.worst < n ? ev->opts.worst : n;
	size_t *idx = malloc(n * sizeof(*idx));
	char name[96];

	if (!idx)
		return;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* Partial selection sort: k is small. */
	for (size_t i = 0; i < k; i++)
		for (size_t j = i + 1; j < n; j++)
			if (worst_key(ev, pr, idx[j]) > worst_key(ev, pr, idx[i])) {
				size_t t = idx[i];

				idx[i] = idx[j];
				idx[j] = t;
			}
	fprintf(f, "\n worst %zu contexts of %s%s\n", k, bot_policy_name(pr->pol.id),
		ev->opts.worst_excess ? " against AUTO (run - AUTO)" : "");
	fprintf(f, "  %-12s %-32s %9s %9s %9s  %-18s %-18s %-18s\n", "fabric", "context", "run",
		"final", "AUTO", "AUTO arm", "best arm", "final arm");
	for (size_t i = 0; i < k; i++) {
		const struct bot_ctx_result *r = &pr->res[idx[i]];
		const struct bot_ds_ctx *c = &ev->ds->ctx[ev->test[idx[i]]];
		char run[32], fin[32], aut[32];

		bot_ctx_format(c->key, name, sizeof(name));
		pct_fmt(run, sizeof(run), r->run_loss);
		pct_fmt(fin, sizeof(fin), r->final_loss);
		pct_fmt(aut, sizeof(aut), c->auto_loss);
		fprintf(f, "  %-12s %-32s %9s %9s %9s  %-18s %-18s %-18s\n", ev->ds->fabrics[c->fabric],
			name, run, fin, aut, arm_label(c->auto_arm), arm_label(c->best_arm),
			arm_label(r->final_arm));
	}
	free(idx);
}

static void print_table(FILE *f, const struct bot_eval *ev)
{
	const struct bot_replay_opts *r = &ev->opts.run;
	char train[128], test[128], par[512], allow[256];

	bot_nodeset_format(&ev->opts.train, train, sizeof(train));
	bot_nodeset_format(&ev->opts.test, test, sizeof(test));
	fprintf(f, "== mode %s: ", bot_replay_mode_name(r->mode));
	switch (r->mode) {
	case BOT_MODE_PERCALL:
		fprintf(f, "%llu calls per context, immediate feedback (upper bound)\n",
			(unsigned long long)r->calls);
		break;
	case BOT_MODE_JOBS:
		fprintf(f, "%u jobs x %u comms x %llu calls, sample rate %g, feedback after each job",
			r->jobs, r->comms, (unsigned long long)r->calls, r->sample_rate);
		if (r->plan_comms && r->plan_comms != r->comms)
			fprintf(f, "; planned for %u comms", r->plan_comms);
		fputc('\n', f);
		break;
	default:
		fprintf(f, "%u comms x %llu calls in epochs of %u, sample rate %g, feedback %u epoch(s) late",
			r->comms, (unsigned long long)r->calls, r->epoch, r->sample_rate, r->delay);
		if (r->plan_comms && r->plan_comms != r->comms)
			fprintf(f, "; planned for %u comms", r->plan_comms);
		fputc('\n', f);
	}
	bot_set_allow_format(ev->opts.allow, allow, sizeof(allow));
	fprintf(f, "   test nodes %s: %zu contexts, %zu scenarios; train nodes %s: %zu contexts; seed %llu; history %s; allow-list %s\n",
		test, ev->ntest, ev->nscen, train, ev->ntrain, (unsigned long long)r->seed,
		ev->opts.history ? "train" : "none", allow);
	/* tuned on the other fabrics only with tuning, the history from its
	 * own training contexts only with --history train (it said both
	 * whatever --no-tune and --history said) */
	if (ev->opts.lofo) {
		fprintf(f, "   held-out fabric %s: ", ev->ds->fabrics[ev->opts.holdout]);
		if (ev->opts.tune && ev->opts.tune_contexts && ev->opts.tune_contexts < ev->ntuneset)
			/* --tune-contexts: the stride's subset is what tuned */
			fprintf(f, "parameters tuned on %zu of the other fabrics' %zu training contexts",
				ev->opts.tune_contexts, ev->ntuneset);
		else if (ev->opts.tune)
			fprintf(f, "parameters tuned on the other fabrics' %zu training contexts", ev->ntuneset);
		else
			fprintf(f, "default parameters (--no-tune)");
		if (ev->opts.history)
			fprintf(f, ", history from its own %zu", ev->ntrain);
		else
			fprintf(f, ", no history");
		fprintf(f, "; scored on its %zu test contexts\n", ev->ntest);
	}
	if (!ev->opts.tune)
		fprintf(f, "   parameters (defaults):\n");
	else if (!ev->ntuneset)
		fprintf(f, "   parameters (defaults: the training split has no context to tune on):\n");
	else
		fprintf(f, "   parameters (tuned on the training split: lowest mean + p99/4 + share "
			   "harmed; the defaults unless beaten by more than %g%%):\n",
			100 * BOT_REPLAY_TUNE_MARGIN);
	for (size_t k = 0; k < ev->npol; k++) {
		const struct bot_policy_result *pr = &ev->pol[k];

		char tm[32], tp[32];

		params_format(&pr->pol.par, par, sizeof(par));
		pct_fmt(tm, sizeof(tm), pr->tune_mean);
		pct_fmt(tp, sizeof(tp), pr->tune_p99);
		if (pr->grid_points)
			fprintf(f, "     %-14s point %u of %u (train mean %s, p99 %s): %s\n",
				bot_policy_name(pr->pol.id), pr->grid_chosen, pr->grid_points, tm, tp,
				par);
		else
			fprintf(f, "     %-14s defaults: %s\n", bot_policy_name(pr->pol.id), par);
	}
	for (size_t fab = 0; fab < ev->ds->nfabrics; fab++) {
		if (!ev->fabric_contexts[fab])
			continue;
		fprintf(f, "\n fabric %s\n", ev->ds->fabrics[fab]);
		table_block(f, ev, (long)fab);
	}
	fprintf(f, "\n all fabrics (loss = mean(arm)/best - 1 per context, call-weighted; final = final plan)\n");
	table_block(f, ev, -1);
	fprintf(f, "   paired sign-flip permutation test of the mean loss per scenario (fabric, collective, nnodes) vs AUTO,"
		   " Holm-corrected per policy, alpha %g\n", ev->opts.alpha);
	for (size_t k = 0; ev->opts.worst && k < ev->npol; k++)
		print_worst(f, ev, &ev->pol[k]);
	fprintf(f, "   wall time %.1f s\n\n", ev->seconds);
}

/* ---- JSON ---- */

static void jnum(FILE *f, double x)
{
	if (isnan(x) || isinf(x))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", x);
}

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void jsummary(FILE *f, const struct bot_summary *s)
{
	fprintf(f, "\"contexts\": %zu, \"over_10pct\": %zu, \"mean\": ", s->contexts, s->over_10pct);
	jnum(f, s->mean);
	fprintf(f, ", \"p50\": ");
	jnum(f, s->p50);
	fprintf(f, ", \"p90\": ");
	jnum(f, s->p90);
	fprintf(f, ", \"p99\": ");
	jnum(f, s->p99);
	fprintf(f, ", \"max\": ");
	jnum(f, s->max);
	fprintf(f, ", \"final_mean\": ");
	jnum(f, s->final_mean);
	fprintf(f, ", \"harmed\": %zu, \"worst_excess\": ", s->harmed);
	jnum(f, s->worst_excess);
	fprintf(f, ", \"saved\": ");
	jnum(f, s->saved);
	fprintf(f, ", \"lost\": ");
	jnum(f, s->lost);
}

static void jfabrics(FILE *f, const struct bot_eval *ev, const struct bot_summary *per)
{
	int first = 1;

	fprintf(f, ", \"fabrics\": {");
	for (size_t fab = 0; fab < ev->ds->nfabrics; fab++) {
		if (!ev->fabric_contexts[fab])
			continue;
		fprintf(f, "%s\n      ", first ? "" : ",");
		jstr(f, ev->ds->fabrics[fab]);
		fprintf(f, ": {");
		jsummary(f, &per[fab]);
		fprintf(f, "}");
		first = 0;
	}
	fprintf(f, "}");
}

static void print_json(FILE *f, const struct bot_eval *const *ev, size_t n)
{
	const struct bot_eval *e0 = ev[0];
	char train[128], test[128], allow[256];
	double v[NPARAMS];

	bot_set_allow_format(e0->opts.allow, allow, sizeof(allow));
	bot_nodeset_format(&e0->opts.train, train, sizeof(train));
	bot_nodeset_format(&e0->opts.test, test, sizeof(test));
	fprintf(f, "{\n  \"format\": \"nccl-bot-replay\", \"version\": 1, \"seed\": %llu,\n",
		(unsigned long long)e0->opts.run.seed);
	fprintf(f, "  \"train_nodes\": \"%s\", \"test_nodes\": \"%s\", \"history\": \"%s\", \"tuned\": %s, \"allow\": %u, \"allow_list\": \"%s\", \"lofo\": %s,\n",
		train, test, e0->opts.history ? "train" : "none", e0->opts.tune ? "true" : "false",
		e0->opts.allow, allow, e0->opts.lofo ? "true" : "false");
	fprintf(f, "  \"modes\": [");
	for (size_t m = 0; m < n; m++) {
		const struct bot_replay_opts *r = &ev[m]->opts.run;

		fprintf(f, "%s\n    {\"mode\": \"%s\", \"calls\": %llu, \"jobs\": %u, \"comms\": %u, "
			   "\"plan_comms\": %u, "
			   "\"sample_rate\": %g, \"epoch\": %u, \"delay\": %u, \"scenarios\": %zu, \"seconds\": %.3f}",
			m ? "," : "", bot_replay_mode_name(r->mode), (unsigned long long)r->calls, r->jobs,
			r->mode == BOT_MODE_PERCALL ? 1u : r->comms,
			r->mode == BOT_MODE_PERCALL ? 1u : r->plan_comms ? r->plan_comms : r->comms,
			r->sample_rate, r->epoch, r->delay, ev[m]->nscen, ev[m]->seconds);
	}
	fprintf(f, "\n  ],\n  \"auto\": {\"name\": \"auto\", ");
	if (e0->opts.lofo) {
		/* Each evaluation scores one fabric: AUTO per held-out fabric
		 * (of the first mode; AUTO does not depend on the mode). */
		fprintf(f, "\"fabrics\": {");
		for (size_t m = 0; m < n && ev[m]->opts.run.mode == e0->opts.run.mode; m++) {
			fprintf(f, "%s\n      ", m ? "," : "");
			jstr(f, ev[m]->ds->fabrics[ev[m]->opts.holdout]);
			fprintf(f, ": {");
			jsummary(f, &ev[m]->auto_all);
			fprintf(f, "}");
		}
		fprintf(f, "}");
	} else {
		jsummary(f, &e0->auto_all);
		jfabrics(f, e0, e0->auto_fabric);
	}
	fprintf(f, "},\n  \"policies\": [");
	for (size_t m = 0; m < n; m++) {
		for (size_t k = 0; k < ev[m]->npol; k++) {
			const struct bot_policy_result *pr = &ev[m]->pol[k];

			fprintf(f, "%s\n    {\"name\": \"%s\", \"mode\": \"%s\", ", m || k ? "," : "",
				bot_policy_name(pr->pol.id), bot_replay_mode_name(ev[m]->opts.run.mode));
			if (ev[m]->opts.lofo) {
				fprintf(f, "\"holdout\": ");
				jstr(f, ev[m]->ds->fabrics[ev[m]->opts.holdout]);
				fprintf(f, ", ");
			}
			jsummary(f, &pr->all);
			fprintf(f, ", \"mean_vs_auto\": ");
			jnum(f, ev[m]->auto_all.mean > 0 ? pr->all.mean / ev[m]->auto_all.mean : NAN);
			fprintf(f, ",\n      \"scenarios\": %zu, \"better\": %zu, \"worse\": %zu, "
				   "\"grid_points\": %u, \"grid_point\": %u, \"params\": {",
				ev[m]->nscen, pr->better, pr->worse, pr->grid_points, pr->grid_chosen);
			param_values(&pr->pol.par, v);
			for (size_t i = 0; i < NPARAMS; i++) {
				fprintf(f, "%s\"%s\": ", i ? ", " : "", param_names[i]);
				jnum(f, v[i]);
			}
			fprintf(f, "}");
			jfabrics(f, ev[m], pr->fabric);
			fprintf(f, "}");
		}
	}
	fprintf(f, "\n  ]\n}\n");
}

/* ---- CSV ---- */

static void csv_row(FILE *f, const char *mode, const char *pol, const char *fab,
		    const struct bot_summary *s, long better, long worse, size_t nscen, const char *par,
		    const char *holdout)
{
	fprintf(f, "%s,%s,%s,%zu,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", mode, pol, fab, s->contexts,
		s->over_10pct, s->mean, s->p50, s->p90, s->p99, s->max, s->final_mean);
	if (better >= 0)
		fprintf(f, "%ld,%ld,%zu,%s,", better, worse, nscen, par);
	else
		fprintf(f, ",,,,");
	fprintf(f, "%zu,%.6g,%.6g,%.6g,%s\n", s->harmed, s->worst_excess, s->saved, s->lost, holdout);
}

static void print_csv(FILE *f, const struct bot_eval *const *ev, size_t n)
{
	char par[512];

	fprintf(f, "mode,policy,fabric,contexts,over_10pct,mean,p50,p90,p99,max,final_mean,better,worse,"
		   "scenarios,params,harmed,worst_excess,saved,lost,holdout\n");
	for (size_t m = 0; m < n; m++) {
		const struct bot_eval *e = ev[m];
		const char *mode = bot_replay_mode_name(e->opts.run.mode);
		const char *ho = e->opts.lofo ? e->ds->fabrics[e->opts.holdout] : "";

		csv_row(f, mode, "auto", "all", &e->auto_all, -1, -1, 0, "", ho);
		for (size_t fab = 0; fab < e->ds->nfabrics; fab++)
			if (e->fabric_contexts[fab])
				csv_row(f, mode, "auto", e->ds->fabrics[fab], &e->auto_fabric[fab], -1, -1, 0, "", ho);
		for (size_t k = 0; k < e->npol; k++) {
			const struct bot_policy_result *pr = &e->pol[k];
			const char *name = bot_policy_name(pr->pol.id);

			params_format(&pr->pol.par, par, sizeof(par));
			csv_row(f, mode, name, "all", &pr->all, (long)pr->better, (long)pr->worse, e->nscen, par, ho);
			for (size_t fab = 0; fab < e->ds->nfabrics; fab++)
				if (e->fabric_contexts[fab])
					csv_row(f, mode, name, e->ds->fabrics[fab], &pr->fabric[fab], -1, -1, 0, "", ho);
		}
	}
}

void bot_eval_print(FILE *f, enum bot_format fmt, const struct bot_eval *const *ev, size_t n)
{
	if (!n)
		return;
	switch (fmt) {
	case BOT_FMT_JSON:
		print_json(f, ev, n);
		break;
	case BOT_FMT_CSV:
		print_csv(f, ev, n);
		break;
	default:
		for (size_t m = 0; m < n; m++)
			print_table(f, ev[m]);
	}
}
