#!/usr/bin/env bash
# test_query_sql.sh — `tracelens query` and `tracelens sql` on the shared
# real traces: builds a small store in a temp dir (every shared Kineto trace
# under label set=a, plus re-hashed copies of three of them under set=b whose
# files are deleted before querying), then checks that the verb, SQL and a
# python3-stdlib count over the raw JSON agree (kernel and op counts per
# trace, kernel time by name), that both agree with the report sheets
# (kernel_summary, gpu_timeline vs the reference CSVs), threads, errors that
# point at the offending token, output formats, push-down, and that Ctrl-C
# exits 130 leaving the store intact. Prints "N passed, M failed".
# Skips (exit 77) when ../shared/data is absent.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${TL_BUILD:-$root/build}
TL=${TRACELENS:-$BUILD/tracelens}
DATA=${TL_SHARED_DATA:-$root/../shared/data}
[ -d "$DATA" ] && DATA=$(cd "$DATA" && pwd -P)
if [ ! -d "$DATA/kineto" ]; then echo "test_query_sql: no shared data at $DATA (skipped)"; exit 77; fi
if [ ! -x "$TL" ]; then echo "test_query_sql: $TL not built"; exit 1; fi

tmp=$(mktemp -d /tmp/tl_test_query.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
DB=$tmp/db
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if [ -n "$2" ] && [ "$2" = "$3" ]; then ok; else bad "$1"; diff <(echo "$2") <(echo "$3") | head -8; fi; }
Q() { "$TL" --db "$DB" query -q "$@"; }
S() { "$TL" --db "$DB" sql -q "$@"; }

# ---- the store -----------------------------------------------------------
"$TL" --db "$DB" ingest -q --label set=a "$DATA/kineto" "$DATA/inference" >/dev/null 2>&1
small=(kineto/mi300/gaunernst_bert-small-uncased__1016001.json.gz
       kineto/mi210/gpu_only_trace/gpu_only_trace.json.gz
       kineto/torch_compile_triton/trace.json.gz)
mkdir -p "$tmp/copies"
for f in "${small[@]}"; do
  # same events, another gzip header mtime: a new content hash, a new trace
  python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); b[4:8]=b'\x01\x02\x03\x04'; open(sys.argv[2],'wb').write(b)" \
    "$DATA/$f" "$tmp/copies/$(basename "$f")"
done
"$TL" --db "$DB" ingest -q --label set=b --label bs=32 "$tmp/copies" >/dev/null 2>&1
rm -rf "$tmp/copies"   # answers must come from the store alone
ntr=$("$TL" --db "$DB" ls | wc -l)
[ "$ntr" -ge 10 ] && ok || bad "store has $ntr traces"

# ---- python reference over the raw JSON ----------------------------------
"$TL" --db "$DB" ls | awk -F'\t' '{print $1 "\t" $6}' > "$tmp/ids.tsv"
python3 - "$tmp" "$DATA" <<'PY' || bad "python reference"
import gzip, json, os, sys, collections
from decimal import Decimal
tmp, data = sys.argv[1], sys.argv[2]
ids = {}
for line in open(os.path.join(tmp, 'ids.tsv')):
    i, p = line.rstrip('\n').split('\t')
    ids.setdefault(p, i)
small = ['kineto/mi300/gaunernst_bert-small-uncased__1016001.json.gz',
         'kineto/mi210/gpu_only_trace/gpu_only_trace.json.gz',
         'kineto/torch_compile_triton/trace.json.gz']
per_trace = []           # id, kernels, cpu_ops
by_name_a = collections.Counter()
by_name_b = collections.Counter()
durs = collections.defaultdict(list)
for p, i in sorted(ids.items()):
    if not os.path.exists(p):
        continue
    with gzip.open(p, 'rb') as fh:
        doc = json.load(fh, parse_float=Decimal)
    nk = nop = 0
    rel = os.path.relpath(p, data)
    for e in doc.get('traceEvents', []):
        if not isinstance(e, dict) or e.get('ph') != 'X':
            continue
        cat = e.get('cat')
        if cat == 'kernel':
            nk += 1
            d = int(Decimal(e.get('dur', 0)) * 1000)
            by_name_a[e.get('name')] += d
            durs[e.get('name')].append(d)
            if rel in small:
                by_name_b[e.get('name')] += d
        elif cat == 'cpu_op':
            nop += 1
    per_trace.append((i, nk, nop))
with open(os.path.join(tmp, 'py_kernels.csv'), 'w') as f:
    for i, nk, nop in sorted(per_trace):
        if nk: f.write(f'{i},{nk}\n')
with open(os.path.join(tmp, 'py_ops.csv'), 'w') as f:
    for i, nk, nop in sorted(per_trace):
        if nop: f.write(f'{i},{nop}\n')
def dump(c, name):
    with open(os.path.join(tmp, name), 'w') as f:
        for k in sorted(c, key=lambda s: s.encode()):
            f.write(json.dumps([k, c[k]]) + '\n')
dump(by_name_a, 'py_byname_a.jsonl')
dump(by_name_b, 'py_byname_b.jsonl')
# median and p90 (linear interpolation) of the most frequent kernel
name = max(durs, key=lambda k: (len(durs[k]), k))
v = sorted(durs[name])
def q(p):
    pos = p * (len(v) - 1); lo = int(pos); hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)
json.dump({'name': name, 'median': q(0.5), 'p90': q(0.9), 'n': len(v)}, open(os.path.join(tmp, 'py_quant.json'), 'w'))
PY

# to "name,value" jsonl in byte order, for comparison with the python dump
jsonl_pairs() {
  python3 -c "
import csv, json, sys
rows = list(csv.reader(sys.stdin))[1:]
rows.sort(key=lambda r: r[0].encode())
for r in rows: print(json.dumps([r[0], int(r[1])]))"
}

# ---- 1. kernels and ops per trace: verb = sql = python --------------------
a=$(Q --table kernels --trace label:set=a --by trace_id --agg count --sort trace_id --format csv | tail -n +2)
b=$(S --format csv "SELECT trace_id, count(*) FROM kernels WHERE label_set = 'a' GROUP BY 1 ORDER BY 1" | tail -n +2)
check "kernels per trace: query vs sql" "$a" "$b"
check "kernels per trace: query vs python" "$a" "$(cat "$tmp/py_kernels.csv")"
a=$(Q --table ops --trace label:set=a --by trace_id --agg count --sort trace_id --format csv | tail -n +2)
b=$(S --format csv "SELECT trace_id, count(*) FROM ops WHERE label_set = 'a' GROUP BY 1 ORDER BY 1" | tail -n +2)
check "cpu ops per trace: query vs sql" "$a" "$b"
check "cpu ops per trace: query vs python" "$a" "$(cat "$tmp/py_ops.csv")"

# ---- 2. kernel time by name ------------------------------------------------
a=$(Q --trace label:set=a --by name --agg 'sum(dur)' --format csv | jsonl_pairs)
b=$(S --format csv "SELECT name, sum(dur) FROM kernels WHERE label_set = 'a' GROUP BY name" | jsonl_pairs)
check "kernel time by name: query vs sql" "$a" "$b"
check "kernel time by name: query vs python" "$a" "$(cat "$tmp/py_byname_a.jsonl")"
# restricted to the copies (their files are gone)
a=$(Q --trace label:set=b --by name --agg 'sum(dur)' --format csv | jsonl_pairs)
b=$(S --format csv "SELECT name, sum(dur) FROM kernels WHERE label_set = 'b' GROUP BY name" | jsonl_pairs)
check "label set=b: query vs sql" "$a" "$b"
check "label set=b: query vs python (source files deleted)" "$a" "$(cat "$tmp/py_byname_b.jsonl")"
a=$(Q --trace label:bs=32 --by label.bs --agg count --format csv | tail -n +2)
b=$(S --format csv "SELECT label_bs, count(*) FROM kernels WHERE label_bs = '32' GROUP BY 1" | tail -n +2)
check "group by a label: query vs sql" "$a" "$b"

# ---- 3. quantiles -----------------------------------------------------------
qwhere=$(python3 -c "import json; d=json.load(open('$tmp/py_quant.json')); print('name = ' + \"'\" + d['name'].replace(\"'\", \"''\") + \"'\")")
exp=$(python3 -c "import json; d=json.load(open('$tmp/py_quant.json')); print('%r,%r' % (float(d['median']), float(d['p90'])))")
got=$(Q --trace label:set=a --where "$qwhere" --agg 'median(dur),p90(dur)' --format csv | tail -1)
[ -n "$exp" ] || bad "no quantile reference"
[ -n "${VERBOSE:-}" ] && echo "quantiles: got=$got exp=$exp"
check "median/p90 vs python" "$got" "$exp"

# ---- 4. threads give the same answer ----------------------------------------
a=$(Q --threads 1 --by name,trace_id --agg 'sum(dur),count,p90(dur),std(dur),nunique(stream),min(ts),max(dur)' --format csv)
b=$(Q --threads 2 --by name,trace_id --agg 'sum(dur),count,p90(dur),std(dur),nunique(stream),min(ts),max(dur)' --format csv)
check "threads 1 vs 2" "$a" "$b"

# ---- 5. agreement with the report sheets -------------------------------------
a=$(Q --table kernels --trace label:set=a --by trace_id --agg 'sum(dur),count' --sort trace_id --format csv | tail -n +2)
b=$(S --format csv "SELECT trace_id, CAST(round(sum(kernel_duration_us_sum) * 1000) AS INTEGER), sum(kernel_duration_us_count)
                    FROM kernel_summary WHERE label_set = 'a' GROUP BY 1 ORDER BY 1" | tail -n +2)
check "kernels vs kernel_summary sheet" "$a" "$b"
for f in kineto/mi300/Falconsai_nsfw_image_detection__1016002 kineto/mi300/gaunernst_bert-small-uncased__1016001 \
         kineto/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005; do
  id=$(awk -F'\t' -v p="$DATA/$f.json.gz" '$2 == p {print $1}' "$tmp/ids.tsv" | head -1)
  got=$(Q --table gpu_timeline --trace "$id" --select type,time_ms,percent --format csv)
  ref=$(cat "$DATA/${f}_perf_report_csvs/gpu_timeline.csv")
  same=$(python3 - "$got" "$ref" <<'PY'
import csv, io, math, sys
g = list(csv.reader(io.StringIO(sys.argv[1])))[1:]
r = list(csv.reader(io.StringIO(sys.argv[2])))[1:]
ok = len(g) == len(r) and all(a[0] == b[0] and all(math.isclose(float(x), float(y), rel_tol=1e-9, abs_tol=1e-12)
                                                  for x, y in zip(a[1:], b[1:])) for a, b in zip(g, r))
print(1 if ok else 0)
PY
)
  check "gpu_timeline vs reference CSV: $(basename "$f")" "$same" 1
  a=$(Q --table gpu_timeline --trace "$id" --select type,time_ms,percent --format csv)
  b=$(S --format csv "SELECT type, time_ms, percent FROM gpu_timeline WHERE trace_id = '$id'")
  check "gpu_timeline query vs sql: $(basename "$f")" "$a" "$b"
done

# ---- 6. joins on launcher (uid lookups) vs the verb's launcher_name ----------
a=$(Q --where 'launcher is not null' --by launcher_name --agg 'sum(dur),count' --format csv | tail -n +2 | sort)
b=$(S --format csv "SELECT e.name, sum(k.dur), count(*) FROM kernels k JOIN events e ON e.trace_id = k.trace_id
                    AND e.uid = k.launcher GROUP BY e.name" | tail -n +2 | sort)
check "launcher join: sql vs query" "$a" "$b"
a=$(Q --table ops --by name --agg 'sum(kernel_time)' --where 'kernel_time > 0' --format csv | tail -n +2 | sort)
b=$(S --format csv "SELECT o.name, sum(k.dur) FROM kernels k JOIN ops o ON o.trace_id = k.trace_id AND o.uid = k.launcher
                    GROUP BY o.name" | tail -n +2 | sort)
c=$(S --format csv "SELECT o.name, sum(k.dur) FROM events k JOIN ops o ON o.trace_id = k.trace_id AND o.uid = k.launcher
                    WHERE k.kind IN ('kernel', 'gpu_memcpy', 'gpu_memset') GROUP BY o.name" | tail -n +2 | sort)
check "ops.kernel_time vs sql join" "$a" "$c"
[ -n "$b" ] && ok || bad "ops join empty"

# ---- 7. errors name the offending token ---------------------------------------
out=$(Q --where "nmae ~ 'gemm'" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "unknown column 'nmae'" && echo "$out" | grep -q "^  ^^^^$" && ok || bad "unknown column error: $out"
out=$(Q --where "name ~ '(ab'" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "bad regex '(ab'" && echo "$out" | grep -q "^         ^^^^^$" && ok || bad "bad regex error: $out"
out=$(Q --where "dur >= 'slow'" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "type mismatch" && echo "$out" | grep -q "^         ^^^^^^$" && ok || bad "type mismatch error: $out"
out=$(Q --by name --agg 'mean(name)' 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "type mismatch" && ok || bad "agg type error: $out"
out=$(S "SELECT nmae FROM kernels" 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "no such column: nmae" && echo "$out" | grep -q "^         ^^^^$" && ok || bad "sql error: $out"
out=$(Q --table kernals 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "unknown table 'kernals'" && ok || bad "unknown table: $out"

# ---- 8. output formats and help --------------------------------------------------
Q --by name --agg 'sum(dur)' --top 5 --format jsonl | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert len(rows) == 5 and all('sum(dur)' in r for r in rows)" && ok || bad "jsonl output"
Q --by name --agg 'sum(dur)' --top 5 --format xlsx -o "$tmp/q.xlsx" && python3 -c "
import zipfile, sys; z = zipfile.ZipFile(sys.argv[1]); assert any(n.startswith('xl/worksheets/') for n in z.namelist())" "$tmp/q.xlsx" && ok || bad "xlsx output"
h=$("$TL" query --help)
for want in "which kernels got slower" "GEMM time per batch size" "idle time exceeded 20" "unique-arg convolutions" "label:set=nightly"; do
  echo "$h" | grep -qi "$want" && ok || bad "query --help lacks '$want'"
done
h=$("$TL" sql --help)
for want in "got slower" "batch size" "idle time exceeded 20" "unique-arg convolutions" "JOIN"; do
  echo "$h" | grep -qi "$want" && ok || bad "sql --help lacks '$want'"
done

# ---- 9. push-down: a label or trace constraint reaches the virtual table --------
p=$(S --format csv "EXPLAIN QUERY PLAN SELECT count(*) FROM kernels WHERE label_set = 'b'")
echo "$p" | grep -Eq "VIRTUAL TABLE INDEX 0:[0-9]+:1;" && ok || bad "label push-down: $p"
p=$(S --format csv "EXPLAIN QUERY PLAN SELECT o.name FROM kernels k JOIN ops o ON o.trace_id = k.trace_id AND o.uid = k.launcher")
echo "$p" | grep -Eq "SCAN o VIRTUAL TABLE INDEX 0:0:1;1:1;" && ok || bad "uid lookup plan: $p"

# ---- 10. Ctrl-C: exit 130, store untouched ---------------------------------------
"$TL" --db "$DB" sql -q --format csv "SELECT count(*) FROM events a, events b WHERE a.dur = b.dur + 1" >/dev/null 2>"$tmp/int.err" &
pid=$!
sleep 1
kill -INT $pid
wait $pid; rc=$?
[ $rc = 130 ] && grep -q "interrupted" "$tmp/int.err" && ok || bad "sql Ctrl-C exit $rc: $(cat "$tmp/int.err")"
check "store intact after interrupt" "$("$TL" --db "$DB" ls | wc -l)" "$ntr"
"$TL" --db "$DB" query -q --table events --where "args ~ '(x|y)+z'" --by trace_id --agg count >/dev/null 2>"$tmp/int2.err" &
pid=$!
sleep 0.3
kill -INT $pid 2>/dev/null
wait $pid; rc=$?
{ [ $rc = 130 ] || [ $rc = 0 ]; } && ok || bad "query Ctrl-C exit $rc"
a=$(Q --by trace_id --agg count --format csv | wc -l)
[ "$a" -gt 5 ] && ok || bad "query after interrupt"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
