#!/bin/sh
# stage-deb.sh DEB DIR — puts a release .deb where the guest's job finds it
# (DIR/tether.deb) with the commit it was built from (DIR/commit, read from
# GoReleaser's metadata.json beside it), which guest/deb.sh expects
# tether --version to name, and the systemd user unit of
# examples/integrations, which guest/deb.sh runs with the package.
set -eu
DEB=${1:?usage: stage-deb.sh DEB DIR} DIR=${2:?usage: stage-deb.sh DEB DIR}
META=$(dirname "$DEB")/metadata.json
[ -s "$DEB" ] || { echo "stage-deb: no $DEB" >&2; exit 1; }
COMMIT=$(sed -n 's/.*"commit":"\([0-9a-f]\{40\}\)".*/\1/p' "$META")
[ -n "$COMMIT" ] || { echo "stage-deb: no commit in $META" >&2; exit 1; }
mkdir -p "$DIR" && cp "$DEB" "$DIR/tether.deb" && echo "$COMMIT" >"$DIR/commit"
cp "$(dirname "$0")/../../examples/integrations/systemd/tether-dev.service" "$DIR/"
