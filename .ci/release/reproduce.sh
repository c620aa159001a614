#!/bin/sh
# reproduce.sh — the snapshot release twice, compared byte for byte: once
# in this checkout (dist/, kept for what follows: the VM installs its .deb)
# and once in a fresh clone of the same commit at another path, under
# another umask. Every file dist/checksums.txt lists (archives, packages,
# SBOMs), and the Homebrew cask and Scoop manifest, must be identical, and
# `tether --version` must name the commit. Exit 1 naming what differs.
#
# Both builds share the Go build cache (warm: ~20 s each on 2 cores);
# REPRO_GOCACHE=fresh gives the second an empty one, so that every package
# and the tools themselves are compiled again (measured 2026-12-03: 456 s
# for that build, where the first took 38 s).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
cd "$REPO"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "reproduce: the checkout has uncommitted changes; the clone would build HEAD without them: commit first" >&2
  exit 1
fi
T=$(mktemp -d /var/tmp/tether-repro.XXXXXX)
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
t0=$(date +%s)
"$HERE/release.sh" release --snapshot --clean >"$T/a.log" 2>&1 || { tail -30 "$T/a.log" >&2; exit 1; }
t1=$(date +%s)
(umask 002 && git clone -q --no-hardlinks "$REPO" "$T/src")
git -C "$T/src" checkout -q --detach "$(git rev-parse HEAD)"
[ "${REPRO_GOCACHE:-}" = fresh ] && export GOCACHE="$T/gocache"
# Another umask, as on another machine: the checkout's and the generated
# files' modes differ (0664, 0775 under 002), what is released must not.
(umask 002 && "$T/src/.ci/release/release.sh" release --snapshot --clean) >"$T/b.log" 2>&1 || { tail -30 "$T/b.log" >&2; exit 1; }
t2=$(date +%s)
echo "reproduce: build in $REPO took $((t1 - t0))s, in a clone at $T/src $((t2 - t1))s${GOCACHE:+ (empty GOCACHE)}"

bad=0
for f in checksums.txt homebrew/Casks/tether.rb scoop/tether.json $(awk '{print $2}' dist/checksums.txt); do
  if ! cmp -s "dist/$f" "$T/src/dist/$f"; then
    echo "reproduce: DIFFERS: $f" >&2; bad=1
  fi
done
n=$(wc -l <dist/checksums.txt)
# 5 archives, 2 .deb, 2 .rpm, an SBOM per binary (10)
[ "$n" = 19 ] || { echo "reproduce: $n files in checksums.txt, want 19" >&2; bad=1; }
# The release names its commit (version/, stamped by .goreleaser.yaml).
v=$(dist/tether_linux_amd64_v1/tether --version)
case $v in "tether v"*" (rev $(git rev-parse --short=12 HEAD)) "*) echo "reproduce: $v" ;;
*) echo "reproduce: tether --version = '$v', want the snapshot's version and commit $(git rev-parse --short=12 HEAD)" >&2; bad=1 ;; esac
[ $bad = 0 ] && echo "reproduce: identical: checksums.txt, its $n files, the cask and the Scoop manifest"
exit $bad
