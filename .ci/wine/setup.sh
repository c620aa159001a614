#!/usr/bin/env bash
# Prepares Wine for `GOOS=windows go test` (issue 14) and prints the prefix
# to use as WINEPREFIX. Idempotent: packages are installed once, and the
# prefix is built once per Wine version and shim source, under /var/tmp,
# then reused (a fresh one costs ~10 s and ~700 MB).
#
#   export WINEPREFIX=$(.ci/wine/setup.sh)
#   PATH="$PWD/.ci/wine:$PATH" GOOS=windows go test ./contain/
#
# Facts behind each step: ../shared/WINDOWS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wine=/usr/lib/wine/wine64 # Debian puts no wine64 on PATH

need=()
[ -x "$wine" ] || need+=(wine64)
command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(gcc-mingw-w64-x86-64-win32)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

version=$("$wine" --version)
key=$( (echo "$version"; cat "$here/bcryptprimitives.c" "$here/bcryptprimitives.def") | sha256sum | cut -c1-12)
root=/var/tmp/tether-wine
prefix=$root/prefix-$key
mkdir -p "$root"
exec 9>"$root/lock"
flock 9 # one builder at a time; the others wait, then find it ready
if [ ! -e "$prefix/.tether-ready" ]; then
  rm -rf "$prefix" # a build that was interrupted
  for old in "$root"/prefix-*; do [ -e "$old" ] && rm -rf "$old"; done
  mkdir -p "$prefix"
  export WINEPREFIX=$prefix WINEDEBUG=-all
  # No Mono or Gecko installers (they would ask, and nothing here needs them).
  WINEDLLOVERRIDES="mscoree,mshtml=" "$wine" wineboot -i >&2
  # Go needs Windows 10 (Wine 8 reports 7 by default).
  "$wine" winecfg -v win10 >&2
  /usr/lib/wine/wineserver -w
  # Go >= 1.22 imports bcryptprimitives.dll!ProcessPrng; Wine 8 has none.
  x86_64-w64-mingw32-gcc -O2 -shared -o "$prefix/drive_c/windows/system32/bcryptprimitives.dll" \
    "$here/bcryptprimitives.c" "$here/bcryptprimitives.def" -ladvapi32
  echo "$version" >"$prefix/.tether-ready"
fi
echo "$prefix"
