#!/usr/bin/env bash
# The go line of go.mod is a promise to importers (issue 12): tether builds
# and passes its tests with that Go release. This keeps it with the real
# toolchain, Debian's packaged Go of that release: the signed index of the
# suite that has it (InRelease, checked with gpgv against Debian's archive
# keyring) names the .debs and their SHA-256, which are fetched from the
# pool of the mirror apt uses and unpacked with dpkg -x under
# $GOFLOOR_CACHE. Nothing is installed and no apt source is added. The go
# command's own toolchain download (golang.org/toolchain) is not used:
# GOTOOLCHAIN=local.
#
# Cached: a second run needs no network. GOFLOOR_REFRESH=1 asks the mirror
# for a newer build of the same release.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS

floor=$(awk '$1 == "go" { print $2; exit }' go.mod) # e.g. 1.24.0
minor=$(cut -d. -f1,2 <<<"$floor")                  # e.g. 1.24
cache=${GOFLOOR_CACHE:-/var/tmp/tether-go-floor}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
arch=$(dpkg --print-architecture)
# Debian carries each Go release in one suite at a time, backports
# included (1.22 and 1.23: bookworm-backports; 1.24: trixie; 1.25:
# trixie-backports).
suites=${GOFLOOR_SUITES:-"trixie bookworm-backports trixie-backports bookworm"}
# The mirror apt uses: the first debian URI of the host's sources.
mirror=${GOFLOOR_MIRROR:-$({ sed -n -E 's,^(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?(https?://[^[:space:]]*/debian)/?([[:space:]].*)?$,\3,p' \
  /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}

say() { echo "gofloor: $*" >&2; }
die() { say "$*"; exit 1; }

# field PKG FIELD < Packages: FIELD of each stanza of PKG, one a line.
field() { awk -v p="$1" -v f="$2:" '$1 == "Package:" { m = ($2 == p) } m && $1 == f { print $2 }'; }

# fetch_index SUITE DIR: DIR/Packages of SUITE's main/binary-$arch, its
# hash checked against the signed InRelease. Fails if the suite is absent.
fetch_index() {
  local suite=$1 dir=$2 want got
  curl -fsS --retry 3 -o "$dir/InRelease.asc" "$mirror/dists/$suite/InRelease" || return 1
  gpgv --quiet --keyring "$keyring" --output "$dir/InRelease" "$dir/InRelease.asc" 2>/dev/null ||
    die "$mirror/dists/$suite/InRelease: no good signature from $keyring"
  want=$(awk -v f="main/binary-$arch/Packages.xz" '
    /^[^ ]/ { s = ($1 == "SHA256:") } s && $3 == f { print $1 }' "$dir/InRelease")
  [ -n "$want" ] || die "$suite: InRelease lists no main/binary-$arch/Packages.xz"
  curl -fsS --retry 3 -o "$dir/Packages.xz" "$mirror/dists/$suite/main/binary-$arch/Packages.xz"
  got=$(sha256sum <"$dir/Packages.xz" | cut -d' ' -f1)
  [ "$got" = "$want" ] || die "$suite: Packages.xz has SHA-256 $got, InRelease says $want"
  xz -dc "$dir/Packages.xz" >"$dir/Packages"
}

# newest VERSION...: the highest by Debian's ordering.
newest() {
  local best=$1 v
  for v in "$@"; do dpkg --compare-versions "$v" gt "$best" && best=$v; done
  echo "$best"
}

# install_toolchain DEST: Debian's golang-$minor-go and -src unpacked into
# DEST; prints the Debian version.
install_toolchain() {
  local dest=$1 suite="" version="" versions p file sum got
  work=$(mktemp -d "$cache/.work.XXXXXX")
  # Called in $(...): the trap runs when that subshell ends, die or not
  # ($work is global there for it).
  trap 'rm -rf "$work"' EXIT
  for suite in $suites; do
    fetch_index "$suite" "$work" || continue
    mapfile -t versions < <(field "golang-$minor-go" Version <"$work/Packages")
    [ ${#versions[@]} -gt 0 ] && { version=$(newest "${versions[@]}"); break; }
  done
  [ -n "$version" ] || die "no suite of $mirror ($suites) has golang-$minor-go for $arch"
  say "Debian's golang-$minor-go $version from $suite"
  mkdir -p "$work/root"
  for p in "golang-$minor-go" "golang-$minor-src"; do
    # The stanza of p at exactly that version (the src package is
    # Architecture: all, listed in the same index).
    read -r file sum < <(awk -v p="$p" -v v="$version" '
      $1 == "Package:" { m = ($2 == p); ok = 0; fn = ""; h = "" }
      m && $1 == "Version:" { ok = ($2 == v) }
      m && $1 == "Filename:" { fn = $2 }
      m && $1 == "SHA256:" { h = $2 }
      m && /^$/ && ok && fn != "" { print fn, h; exit }
      END { if (m && ok && fn != "") print fn, h }' "$work/Packages")
    [ -n "${file:-}" ] || die "$suite has no $p at $version"
    curl -fsS --retry 3 -o "$work/$p.deb" "$mirror/$file"
    got=$(sha256sum <"$work/$p.deb" | cut -d' ' -f1)
    [ "$got" = "$sum" ] || die "$file has SHA-256 $got, the signed index says $sum"
    dpkg -x "$work/$p.deb" "$work/root"
    rm -f "$work/$p.deb"
  done
  rm -rf "$dest"
  mv "$work/root" "$dest"
  echo "$version"
}

mkdir -p "$cache"
dir=$cache/go$minor
if [ "${GOFLOOR_REFRESH:-}" = 1 ] || [ ! -s "$dir.version" ] || [ ! -x "$dir/usr/lib/go-$minor/bin/go" ]; then
  rm -f "$dir.version"
  version=$(install_toolchain "$dir")
  echo "$version" >"$dir.version"
fi
# Debian's GOROOT; its src, api and misc are relative links into the
# -src package's /usr/share/go-$minor, unpacked beside it.
goroot=$dir/usr/lib/go-$minor

export GOROOT=$goroot GOTOOLCHAIN=local PATH=$goroot/bin:$PATH
got=$(go version)
say "$got (Debian $(cat "$dir.version")), go.mod says go $floor"
case $got in "go version go$minor"[.\ ]*) ;; *) die "expected Go $minor from $goroot" ;; esac

go vet ./...
for os in linux darwin windows; do GOOS=$os go build ./...; done
GOOS=darwin go vet ./...
GOOS=windows go vet ./...
# The whole suite, -short: about 1.5 minutes on 2 cores (-short skips the
# crash-point builds of reap's pid-reuse test and internal/version's
# binary build). It catches what vet cannot: a struct tag option newer
# than the go line is ignored, not refused (encoding/json's omitzero, Go
# 1.24, is why the floor is not 1.23). As in .ci/run, it needs root and
# cgroup v2; the cli tests build tether with this Go.
go test -count=1 -short -timeout 30m ./...
# An importer on this Go: the outside module that embeds tether (its go
# line is the same floor).
(cd examples/embed && go vet ./... && go test -count=1 ./...)
say "Go $minor: vet, builds for linux, darwin and windows, the -short suite and examples/embed took $((SECONDS - t0))s"
