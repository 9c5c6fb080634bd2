#!/bin/bash
# --mpi: ingest, corpus-report and collective split across 4 MPI processes
# (mpirun --oversubscribe -n 4) on a generated 8-rank corpus, each process
# with its own store (--db DIR/tl-%r), must give what one process gives:
# the same traces over the shards, the same workbook and CSVs; and a
# query split over 2-4 processes must give the one-store answer. Exits 77
# (skipped) when MPI is not built in or mpirun is missing.
# Usage: test_mpi.sh BUILD_DIR
set -u
B=${1:?usage: test_mpi.sh BUILD_DIR}
T=$B/tracelens
if ! command -v mpirun >/dev/null; then
    echo "skipped: mpirun not found (install openmpi-bin and libopenmpi-dev, then rebuild)"
    exit 77
fi
if ! "$T" --version | grep -q '^MPI: lib'; then
    echo "skipped: tracelens was built without MPI (install libopenmpi-dev and configure again)"
    exit 77
fi
MPI=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPI+=(--allow-run-as-root)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# sanitizer builds: Open MPI keeps its start-up allocations to the end;
# its plugins stay loaded (not dlclosed at MPI_Finalize) so that the leak
# report can name them and tests/mpi.supp can suppress them
export LSAN_OPTIONS="suppressions=$(dirname "$0")/mpi.supp:print_suppressions=0:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export OMPI_MCA_mca_base_component_disable_dlclose=1
MPI+=(-x OMPI_MCA_mca_base_component_disable_dlclose)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
same_dir() { # NAME DIR1 DIR2
    if [ -n "$(ls "$2" 2>/dev/null)" ] && diff -r "$2" "$3" >/dev/null; then ok; else no "$1 differs"; diff -r "$2" "$3" | head -5; fi
}

"$B/tracegen" --size 400K --ranks 8 -q -o "$W/c/corpus" || { echo "tracegen failed"; exit 1; }
C=$W/c/corpus

# one process
"$T" ingest -q --db "$W/one" "$C" >/dev/null 2>&1
"$T" corpus-report -q --db "$W/one" -b "$W/c" -f rank_ -o "$W/one.xlsx" --csv "$W/cr1" >/dev/null 2>&1
"$T" collective -q --db "$W/one" --trace_pattern "$C/rank_*.json" --world_size 8 --output_csvs_dir "$W/co1" >/dev/null 2>&1

# four processes, a store each
timeout 300 "${MPI[@]}" -n 4 "$T" ingest -q --mpi --db "$W/m/tl-%r" "$C" >/dev/null 2>"$W/err" || no "mpirun ingest failed: $(head -3 "$W/err")"
n=0
for r in 0 1 2 3; do [ -d "$W/m/tl-$r" ] && n=$((n + 1)); done
[ $n = 4 ] && ok || no "ingest --mpi: $n of 4 shards written"
"$T" ls --db "$W/one" | cut -f1-5 >"$W/ls1"
"$T" ls --db "$W/m/tl-0" --db "$W/m/tl-1" --db "$W/m/tl-2" --db "$W/m/tl-3" | cut -f1-5 >"$W/ls2"
if [ -s "$W/ls1" ] && cmp -s "$W/ls1" "$W/ls2"; then ok; else no "ingest --mpi: the shards hold other traces"; fi
[ "$("$T" ls --db "$W/m/tl-3" | wc -l)" -lt 8 ] && ok || no "ingest --mpi: process 3 ingested every file"

timeout 300 "${MPI[@]}" -n 4 "$T" corpus-report -q --mpi --db "$W/m2/tl-%r" -b "$W/c" -f rank_ -o "$W/two.xlsx" \
    --csv "$W/cr2" >/dev/null 2>"$W/err" || no "mpirun corpus-report failed: $(head -3 "$W/err")"
same_dir "corpus-report --mpi CSVs" "$W/cr1" "$W/cr2"
cmp -s "$W/one.xlsx" "$W/two.xlsx" && ok || no "corpus-report --mpi workbook differs"

timeout 300 "${MPI[@]}" -n 4 "$T" collective -q --mpi --db "$W/m3/tl-%r" --trace_pattern "$C/rank_*.json" \
    --world_size 8 --output_csvs_dir "$W/co2" >/dev/null 2>"$W/err" || no "mpirun collective failed: $(head -3 "$W/err")"
same_dir "collective --mpi CSVs" "$W/co1" "$W/co2"

# three processes (an uneven split) over the store list of the four shards
printf '%s\n' "$W"/m/tl-0 "$W"/m/tl-1 "$W"/m/tl-2 "$W"/m/tl-3 >"$W/shards"
timeout 300 "${MPI[@]}" -n 3 "$T" collective -q --mpi --db "@$W/shards" --config corpus \
    --output_csvs_dir "$W/co3" >/dev/null 2>"$W/err" || no "mpirun collective --config failed: $(head -3 "$W/err")"
same_dir "collective --mpi --config over a store list" "$W/co1" "$W/co3"
timeout 300 "${MPI[@]}" -n 3 "$T" corpus-report -q --mpi --db "@$W/shards" --config corpus -o "$W/three.xlsx" \
    --csv "$W/cr3" >/dev/null 2>"$W/err" || no "mpirun corpus-report --config failed: $(head -3 "$W/err")"
same_dir "corpus-report --mpi --config over a store list" "$W/cr1" "$W/cr3"

# query --mpi: each process queries its share of the shards (or its own
# %r store); the partials folded up a tree must give the one-store answer
"$T" ingest -q --db "$W/m/tl-2" "$C/rank_0.json" >/dev/null 2>&1 # a trace held twice counts once
REF=$W/one
same_query() { # N DB ARGS...: query over DB in N processes against one process over $REF
    local n=$1 db=$2
    shift 2
    "$T" query -q --db "$REF" --format csv "$@" >"$W/q1.csv" 2>"$W/q1.err"
    local rc1=$?
    timeout 120 "${MPI[@]}" -n "$n" "$T" query -q --mpi --db "$db" --format csv "$@" >"$W/qn.csv" 2>"$W/err"
    local rcn=$?
    if [ "$rc1" = "$rcn" ] && { [ "$rc1" != 0 ] || [ -s "$W/q1.csv" ]; } && cmp -s "$W/q1.csv" "$W/qn.csv"; then ok
    else no "query --mpi -n $n $* (exit $rc1 against $rcn): $(diff "$W/q1.csv" "$W/qn.csv" | head -3) $(head -2 "$W/err")"; fi
}
AGGS='sum(dur),count,min(dur),max(dur),mean(dur),median(dur),p90(dur),nunique(stream),nunique(trace_id)'
for n in 2 3 4; do
    same_query $n "@$W/shards" --by name --agg "$AGGS" --top 20
done
same_query 4 "$W/m/tl-%r" --by name --agg "$AGGS"
same_query 3 "@$W/shards" --sort -dur --top 15
same_query 3 "@$W/shards" --select name,dur,rank --where 'dur > 20us' --top 40
same_query 2 "@$W/shards" --table traces --select trace_id,rank,events
# ingest times are the shards' own: last:N against the same shards in one process
REF=@$W/shards same_query 3 "@$W/shards" --trace last:3 --by trace_id --agg count
same_query 3 "@$W/shards" --trace rank:2-5 --table ops --by name --agg 'sum(kernel_time),count' --pivot rank --top 10
same_query 3 "@$W/shards" --trace ffff --by name
same_query 3 "@$W/shards" --by nosuch

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
