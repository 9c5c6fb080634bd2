#!/usr/bin/env bash
# make_xplane_seeds.sh — writes a small seed corpus for fuzz_xplane (under
# 50 KB in all) derived from the shared JAX samples: single-plane XSpaces cut
# out of the legacy trace, the smallest HLO module in a metadata plane, and
# truncated/byte-flipped variants. Seeds are generated at test time into a
# build folder and never committed (shared data stays out of the repo).
# Usage: make_xplane_seeds.sh [OUT_DIR] (default build/fuzz_corpus/fuzz_xplane)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$repo/build/fuzz_corpus/fuzz_xplane}"
data="${TL_SHARED_DATA:-$repo/../shared/data}"
src="$data/jax/jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb"
if [ ! -f "$src" ]; then
  echo "make_xplane_seeds: $src not found; no seeds written" >&2
  exit 0
fi
mkdir -p "$out"
python3 - "$src" "$out" <<'PY'
import os, sys
src, out = sys.argv[1], sys.argv[2]
raw = open(src, 'rb').read()

def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if not c & 0x80:
            return r, i

def enc_varint(v):
    o = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        o.append(c | (0x80 if v else 0))
        if not v:
            return bytes(o)

def fields(b):
    """(field, wiretype, raw bytes of the whole field, payload) for each field."""
    i, res = 0, []
    while i < len(b):
        s = i
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            _, i = varint(b, i); pay = None
        elif w == 1:
            i += 8; pay = None
        elif w == 5:
            i += 4; pay = None
        elif w == 2:
            n, i = varint(b, i); pay = b[i:i + n]; i += n
        else:
            raise ValueError('wire type %d' % w)
        res.append((f, w, b[s:i], pay))
    return res

def ld(field, payload):
    return enc_varint(field << 3 | 2) + enc_varint(len(payload)) + payload

planes = [p for f, w, r, p in fields(raw) if f == 1]
def pname(p):
    for f, w, r, pay in fields(p):
        if f == 2:
            return pay.decode('utf-8', 'replace')
    return ''

seeds = {}
for p in planes:
    n = pname(p)
    if n == '/host:metadata':
        # keep only the smallest HLO module entry
        fs = fields(p)
        ems = [r for f, w, r, pay in fs if f == 4]
        small = min(ems, key=len)
        keep = b''.join(r for f, w, r, pay in fs if f != 4) + small
        seeds['metadata_small_hlo'] = ld(1, keep)
    elif n in ('/device:GPU:7', '/device:GPU:0', 'Task Environment', '/device:GPU:1'):
        seeds['plane_' + n.strip('/').replace(':', '_').replace(' ', '_')] = ld(1, p)
if 'plane_device_GPU_7' in seeds:
    g = seeds['plane_device_GPU_7']
    seeds['gpu7_truncated'] = g[:len(g) // 2]
    flipped = bytearray(g)
    for i in range(7, len(flipped), 97):
        flipped[i] ^= 0x21
    seeds['gpu7_flipped'] = bytes(flipped)
    if 'metadata_small_hlo' in seeds:
        seeds['gpu7_with_hlo'] = seeds['metadata_small_hlo'] + g
seeds['head_256'] = raw[:256]
total = 0
for name, b in sorted(seeds.items()):
    if total + len(b) > 48000:
        continue
    open(os.path.join(out, name), 'wb').write(b)
    total += len(b)
print('make_xplane_seeds: %d seeds, %d bytes in %s' % (len(os.listdir(out)), total, out))
PY
