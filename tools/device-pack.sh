#!/usr/bin/env bash
# tools/device-pack.sh — a build's programs, with the shared libraries they
# load that a bare machine may lack (all but the C library's own), copied
# into one folder, so that the benches run on a machine that has none of
# the build's packages (the 16-core device machine of docs/SCALING.md):
#
#   bash tools/device-pack.sh build .devbin/now
#   # there: LD_LIBRARY_PATH=$PWD/.devbin/now/lib TL_BUILD=.devbin/now bash bench/scaling 16 256M
#
# The programs are tracelens, tracegen and the TraceLens_* command names
# (links to tracelens). The target needs a glibc at least as new as the
# build machine's symbol versions ask for (objdump -T).
# usage: tools/device-pack.sh BUILD DIR
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: tools/device-pack.sh BUILD DIR" >&2; exit 2; }
build=$1 dir=$2
[ -x "$build/tracelens" ] || { echo "tools/device-pack.sh: $build/tracelens not built" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$build/tracelens" "$build/tracegen" "$dir/"
for f in "$build"/TraceLens_*; do
  [ -L "$f" ] && ln -s tracelens "$dir/$(basename "$f")"
done
ldd "$build/tracelens" "$build/tracegen" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  while read -r lib; do
    case $(basename "$lib") in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
      *) cp -L "$lib" "$dir/lib/" ;;
    esac
  done
du -sh "$dir" | awk '{print "tools/device-pack.sh: " $2 " holds " $1}'
