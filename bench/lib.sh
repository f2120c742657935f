# shellcheck shell=bash disable=SC2154
# bench/lib.sh - what the replay benchmarks share, sourced (not run):
#   bench_bot NAME    sets $bot: $NCCL_BOT, else the first executable
#                     nccl-bot in ., the top of the tree, _build*/, build*/;
#                     exits 2 naming NAME when there is none
#   bench_tmp         sets $tmp: $BENCH_OUT (created; kept), else a fresh
#                     temporary directory removed when the script exits
#   bench_options NAME "OPT..." ARGS...
#                     each --OPT VALUE or --OPT=VALUE of ARGS sets the
#                     variable OPT (dashes as underscores); any other
#                     argument exits 2 naming NAME
#   bench_init NAME "OPT..." ARGS...
#                     what a benchmark with options starts with:
#                     bench_options, bench_bot, bench_tmp
#   bench_replay_csv NAME OUT WHAT ARGS...
#                     runs "$bot" replay --progress never --format csv ARGS
#                     into OUT (its stderr in OUT.err); on failure prints
#                     "NAME: failed: WHAT" and the error, and exits 1
#   bench_replay_grid NAME X "KEYS" NONE OPT ARGS...
#                     bench_replay_csv for every KEY of KEYS and SEED of
#                     $seeds into $tmp/X_KEY_SEED.csv: ARGS --seed SEED,
#                     with OPT KEY first unless KEY is NONE (the default)
#   bench_wall NAME   prints the wall time since $start
#   bench_worst_table LABEL "KEYS" AUTO_PER_KEY FILE...
#                     the worst-over-seeds table of replay CSVs, one line
#                     per mode and key (below)
# The caller sets $here (the top of the tree) first.

bench_bot() {
	bot=${NCCL_BOT:-}
	if [ -z "$bot" ]; then
		for c in ./nccl-bot "$here/nccl-bot" "$here"/_build*/nccl-bot "$here"/build*/nccl-bot; do
			if [ -x "$c" ]; then bot=$c; break; fi
		done
	fi
	if [ -z "$bot" ] || [ ! -x "$bot" ]; then
		echo "$1: no nccl-bot binary (build first, or set NCCL_BOT)" >&2
		exit 2
	fi
}

bench_tmp() {
	if [ -n "${BENCH_OUT:-}" ]; then
		tmp=$BENCH_OUT
		mkdir -p "$tmp"
	else
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
	fi
}

bench_options() {
	local name=$1 known=" $2 " arg opt val
	shift 2
	while [ $# -gt 0 ]; do
		arg=$1
		case $arg in
		--*=*) opt=${arg%%=*} val=${arg#*=} ;;
		--*) opt=$arg val=${2-} ;;
		*) opt= ;;
		esac
		opt=${opt#--}
		case $known in
		*" $opt "*) ;;
		*) echo "$name: unknown option '$arg' (see the header of $0)" >&2; exit 2 ;;
		esac
		if [ "$arg" = "--$opt" ]; then
			[ $# -ge 2 ] || { echo "$name: $arg needs a value" >&2; exit 2; }
			shift
		fi
		printf -v "${opt//-/_}" '%s' "$val"
		shift
	done
}

bench_init() {
	bench_options "$@"
	bench_bot "$1"
	bench_tmp
}

bench_replay_csv() {
	local name=$1 out=$2 what=$3
	shift 3
	"$bot" replay --progress never --format csv "$@" >"$out" 2>"$out.err" ||
		{ echo "$name: failed: $what" >&2; cat "$out.err" >&2; exit 1; }
}

bench_replay_grid() {
	local name=$1 x=$2 keys=$3 none=$4 opt=$5 key s
	local -a ko
	shift 5
	for key in $keys; do
		ko=()
		[ "$key" = "$none" ] || ko=("$opt" "$key")
		for s in $seeds; do
			bench_replay_csv "$name" "$tmp/${x}_${key}_$s.csv" "$key, seed $s" \
				${ko[@]+"${ko[@]}"} "$@" --seed "$s"
		done
	done
}

bench_wall() {
	local end
	end=$(date +%s.%N)
	awk -v a="$start" -v b="$end" -v n="$1" 'BEGIN { printf "\nwall time %.1f s (%s)\n", b - a, n }'
}

# bench_worst_table LABEL "KEYS" AUTO_PER_KEY FILE...
#                   the table a side-by-side replay benchmark prints: its
#                   FILEs are replay CSVs (--format csv) named X_KEY_SEED.csv
#                   (KEY and SEED hold no '_'); per mode (per-call, jobs,
#                   epochs) and KEY, the worst over the seeds of the policy's
#                   contexts above 10 %, mean, mean / AUTO's mean, harmed
#                   (largest and total), worst excess, and whether it meets
#                   "no context harmed, mean at most AUTO's" (each KEY
#                   against its own AUTO); AUTO's line per KEY when
#                   AUTO_PER_KEY is 1 (the data differ by KEY), else once
#                   per mode, the worst over the KEYs (LABEL names the KEY
#                   column)
bench_worst_table() {
	local label=$1 keys=$2 per_key=$3
	shift 3
	# Columns of the replay's CSV (doc/replay.md): 1 mode 2 policy 3 fabric
	# 4 contexts 5 over_10pct 6 mean 16 harmed 17 worst_excess.
	awk -F, -v keys="$keys" -v label="$label" -v per_key="$per_key" '
	function pct(x) { return sprintf("%.2f%%", 100 * x) }
	function row(m, key, pol, k, a) {
		if (pol == "AUTO") {
			printf "%-15s %-14s %-9s %5d %7s %9s %7s %6s %8s  %s\n", m, key, "AUTO", OVER[k],
				pct(MEAN[k]), "1", "-", "-", "-", "-"
			return
		}
		printf "%-15s %-14s %-9s %5d %7s %9.3f %7d %6d %8s  %s\n", m, key, pol, OVER[k], pct(MEAN[k]),
			(MEAN[a] > 0 ? MEAN[k] / MEAN[a] : 0), HARM[k], TOT[k], pct(WX[k]),
			(HARM[k] == 0 && MEAN[k] <= MEAN[a] + 1e-12) ? "yes" : "no"
	}
	FNR == 1 {
		n = split(FILENAME, parts, "/")
		split(parts[n], f, "_")	# X KEY SEED.csv
		key = f[2]
		next
	}
	$3 != "all" { next }
	{
		k = key SUBSEP ($2 == "auto" ? "AUTO" : "pol") SUBSEP $1
		if (!(k in OVER) || $5 > OVER[k]) OVER[k] = $5
		if (!(k in MEAN) || $6 > MEAN[k]) MEAN[k] = $6
		if ($2 != "auto") {
			POL = $2
			if (!(k in HARM) || $16 > HARM[k]) HARM[k] = $16
			TOT[k] += $16
			if (!(k in WX) || $17 > WX[k]) WX[k] = $17
		}
		CTX[$1] = $4
		CTXK[key, $1] = $4
		seen[$1] = 1
	}
	END {
		nm = split("per-call jobs epochs", modes, " ")
		nk = split(keys, ks, " ")
		printf "%-15s %-14s %-9s %5s %7s %9s %7s %6s %8s  %s\n", "mode", label, "policy", ">10%", "mean",
			"mean/AUTO", "harmed", "total", "worst+", "meets"
		for (i = 1; i <= nm; i++) {
			m = modes[i]
			if (!(m in seen)) continue
			# per key the data (and so the contexts) may differ: the
			# count beside each key, not one for the mode
			first = per_key ? m : m " (" CTX[m] ")"
			if (!per_key) {	# AUTO: the worst over the keys
				a0 = "*" SUBSEP "AUTO" SUBSEP m
				for (j = 1; j <= nk; j++) {
					a = ks[j] SUBSEP "AUTO" SUBSEP m
					if (!(a in OVER)) continue
					if (!(a0 in OVER) || OVER[a] > OVER[a0]) OVER[a0] = OVER[a]
					if (!(a0 in MEAN) || MEAN[a] > MEAN[a0]) MEAN[a0] = MEAN[a]
				}
				row(first, "", "AUTO", a0)
				first = ""
			}
			for (j = 1; j <= nk; j++) {
				a = ks[j] SUBSEP "AUTO" SUBSEP m
				k = ks[j] SUBSEP "pol" SUBSEP m
				if (!(k in OVER)) continue
				if (per_key) {
					row(first, ks[j] " (" CTXK[ks[j], m] ")", "AUTO", a)
					first = ""
					row("", "", POL, k, a)
				} else {	# each against its own AUTO
					row(first, ks[j], POL, k, a)
					first = ""
				}
			}
		}
	}' "$@"
}
