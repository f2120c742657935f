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
