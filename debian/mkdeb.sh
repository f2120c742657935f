#!/bin/sh
# debian/mkdeb.sh - build the Debian packages from a copy of the source
# tree (`make deb` makes one with `make distdir` and runs this on it).
#
#	debian/mkdeb.sh [--version V] TREE
#
# Generates TREE/debian/control from control.in (the rank-side library's
# package is named after the version: nccl-bot-rank-<version>), runs
# dpkg-buildpackage -b -us -uc there (no tests: nocheck; parallel=nproc),
# leaves the .deb, .changes and .buildinfo files beside TREE (its parent
# directory) and removes TREE. --version V first makes TREE version V
# (AC_INIT, a changelog entry, autoreconf): a second version of the
# packages from the same source, e.g. with DEB_BUILD_PROFILES=
# pkg.nccl-bot.rank-only the rank library's package alone, to install
# beside the first (tests/install/test_deb.sh). Environment: what
# debian/rules reads (NCCL_BOT_SLURM, NCCL_BOT_SPANK_DIR,
# NCCL_BOT_SLURM_DEPENDS) and DEB_BUILD_PROFILES.
set -eu
newver=
if [ "${1:-}" = --version ]; then
	newver=$2
	shift 2
fi
[ $# -eq 1 ] || { echo "usage: debian/mkdeb.sh [--version V] TREE" >&2; exit 2; }
tree=$1
cd "$tree"

if [ -n "$newver" ]; then
	case $newver in *[!0-9a-z.+~]*|'') echo "mkdeb: bad version '$newver'" >&2; exit 2 ;; esac
	sed -i "s/^AC_INIT(\[nccl-bot\], \[[^]]*\]/AC_INIT([nccl-bot], [$newver]/" configure.ac
	grep -q "^AC_INIT(\[nccl-bot\], \[$newver\]" configure.ac ||
		{ echo "mkdeb: configure.ac: AC_INIT not changed" >&2; exit 1; }
	{
		printf 'nccl-bot (%s-1) unstable; urgency=medium\n\n' "$newver"
		printf '  * Version %s, built by debian/mkdeb.sh --version.\n\n' "$newver"
		printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' debian/control.in)" "$(date -R)"
		cat debian/changelog
	} >debian/changelog.new
	mv debian/changelog.new debian/changelog
	autoreconf -fi >/dev/null 2>&1 || { echo "mkdeb: autoreconf failed" >&2; exit 1; }
fi

debver=$(dpkg-parsechangelog -SVersion)
upver=${debver%-*}
confver=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" configure)
if [ "$upver" != "$confver" ]; then
	echo "mkdeb: debian/changelog is at $upver but configure at $confver: add a changelog entry" >&2
	exit 1
fi

# libslurm-dev's headers unless another Slurm's are named; none for the
# rank library alone
slurmdep="libslurm-dev <!pkg.nccl-bot.rank-only>"
case ${NCCL_BOT_SLURM:-/usr} in /usr|/usr/) ;; *) slurmdep= ;; esac
# (a line left blank would end the stanza: it goes instead)
if [ -n "$slurmdep" ]; then depsed="s|@SLURM_BUILD_DEP@|$slurmdep|"; else depsed='/@SLURM_BUILD_DEP@/d'; fi
sed -e "s|@RANK_PKG@|nccl-bot-rank-$upver|g" -e "s|@VERSION@|$upver|g" -e "$depsed" \
	debian/control.in >debian/control

DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=$(nproc)" dpkg-buildpackage -b -us -uc
cd ..
rm -rf "$(basename "$tree")"
