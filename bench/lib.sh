# shellcheck shell=bash disable=SC2154
# bench/lib.sh - what the replay benchmarks share, sourced (not run):
#   bench_bot NAME    sets $bot: $NCCL_BOT, else the first executable
#                     nccl-bot in ., the top of the tree, _build*/, build*/;
#                     exits 2 naming NAME when there is none
#   bench_tmp         sets $tmp: $BENCH_OUT (created; kept), else a fresh
#                     temporary directory removed when the script exits
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
