#!/bin/sh
# convert.sh - turn the external measurement CSVs (copied verbatim from
# their public sources, see PROVENANCE.md) into sweep CSV v1 files under
# sweep/ (doc/formats.md section 7). Run from this directory: sh convert.sh
#
# Conversions (everything else is copied as is):
#  - fabric name: aws-g5-a10g / modal-a100 for "sequential" rows, with
#    "-overlap" appended for rows measured while a matmul ran on another
#    stream; the GitHub-issue excerpts get one fabric per source issue.
#  - algo/proto lower-cased; "auto" kept (auto,auto = stock NCCL; a forced
#    algo with proto auto is a partly forced row, kept out of arm statistics).
#  - nbytes: allreduce sizes as given. The aws-g5 allgather size is the
#    per-rank tensor (4 B x elements): its busbw only matches the allreduce
#    runs' ~1.1 GB/s line rate read that way. The sweep format wants NCCL's
#    nBytes (the full buffer), so allgather nbytes = size x ranks.
#  - auto_us empty (NCCL's cost table was not recorded).
#  - rows below 1 KiB and the issue-812 rows (rank count not stated) dropped.
set -e
mkdir -p sweep
hdr='fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us'

conv() {	# $1 input, $2 output, $3 fabric base name (empty: from source)
	awk -F, -v base="$3" -v hdr="$hdr" -v src="$1" '
	NR == 1 { print "# converted from " src " by convert.sh (see PROVENANCE.md)"; print hdr; next }
	$4 == "" || $6 < 1024 { next }
	{
		fab = base
		if (fab == "") {
			n = split($1, p, "/"); fab = "issue-" p[n]
			if ($1 ~ /nccl-tests/) fab = "issue-tests-" p[n]
		} else if ($1 ~ /#.*overlap/) fab = fab "-overlap"
		nb = $6
		if ($5 == "allgather" && $1 ~ /allgather-preview/) nb = $6 * $4
		printf "%s,%s,%s,%s,%s,%s,%s,,%s\n", fab, $5, nb, $4, $3, tolower($7), tolower($8), $9
	}' "$1" > "$2"
}

conv cs244c_aws_g5_a10g_collective_time.csv sweep/aws-g5-a10g.csv aws-g5-a10g
conv cs244c_modal_a100_iteration_time.csv sweep/modal-a100.csv modal-a100
conv nccl_github_issue_excerpts.csv sweep/github-issues.csv ""
