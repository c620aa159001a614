#!/bin/sh
# release.sh [GORELEASER-ARGS...] — runs GoReleaser v2.17.0 at the repo's
# root with the tools this module pins (go.mod here, not tether's: its
# requirements stay out of every importer's build): goreleaser and
# cyclonedx-gomod (the SBOMs). The first build of both takes about 3.5
# minutes on 2 cores; after that the Go build cache serves them.
#
#   .ci/release/release.sh release --snapshot --clean   # dist/, nothing published
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../.."
BIN=$(mktemp -d)
trap 'rm -rf "$BIN"' EXIT
for tool in goreleaser cyclonedx-gomod; do
  ln -s "$(go -C "$HERE" tool -n "$tool")" "$BIN/$tool"
done
# GoReleaser reads the commit, its time and the tag only when `git
# ls-remote --get-url` answers; without a remote (a local clone, a
# worktree) a snapshot silently gets commit "none" and time zero. Name the
# project's remote for its git calls alone, in the environment.
if ! git ls-remote --get-url >/dev/null 2>&1 || [ "$(git ls-remote --get-url)" = origin ]; then
  export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/tether-run/tether.git
fi
PATH=$BIN:$PATH "$BIN/goreleaser" "$@"
