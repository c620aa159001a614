#!/bin/sh
# assets.sh DIR — what release archives and packages carry beside the
# binaries, generated from the commands themselves (.goreleaser.yaml's
# before hook): DIR/man/*.1.gz (internal/mangen) and DIR/completions/
# (tether completion bash|zsh|fish). Reproducible: the man pages are dated
# by the commit (SOURCE_DATE_EPOCH, which internal/mangen reads),
# gzip -n stores no name or time.
set -eu
D=${1:?usage: assets.sh DIR}
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}" CGO_ENABLED=0
rm -rf "$D" && mkdir -p "$D/man" "$D/completions"
go run ./internal/mangen "$D/man"
gzip -9n "$D"/man/*.1
go build -o "$D/tether" ./cmd/tether
"$D/tether" completion bash >"$D/completions/tether.bash"
"$D/tether" completion zsh >"$D/completions/_tether"
"$D/tether" completion fish >"$D/completions/tether.fish"
rm "$D/tether"
