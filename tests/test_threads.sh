#!/bin/bash
# The threaded paths give what one thread gives: a generated 6-rank corpus
# ingested one file at a time with each file parsed in parts, and 3 files
# at once, stores the same events; the corpus workbook's sheets at -j 1
# and -j 6, the collective report's at 1 and 4 workers, and a query at 1
# and 4 threads are identical. Every command must exit 0 with nothing from
# a sanitizer on stderr: built with -DTL_TSAN=ON (tools/test-all.sh) this
# is the ThreadSanitizer's run over the threads, pool and locks.
# Usage: test_threads.sh BUILD_DIR
. "$(dirname "$0")/checks.sh" "${1:?usage: test_threads.sh BUILD_DIR}"
T=$TL W=$tmp
# run NAME CMD...: runs CMD, its stderr kept in $W/NAME.err; must exit 0
# without a sanitizer report
run() {
    local name=$1 rc
    shift
    "$@" >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    if [ $rc != 0 ] || grep -q "Sanitizer" "$W/$name.err"; then
        bad "$name: exit $rc"
        grep -m 12 -E "WARNING|SUMMARY|#[0-9] " "$W/$name.err"
        return 1
    fi
    ok "$name"
}
same() { # NAME FILE1 FILE2
    if [ -s "$2" ] && cmp -s "$2" "$3"; then ok "$1"; else bad "$1 differs"; diff "$2" "$3" | head -5; fi
}
samedir() { # NAME DIR1 DIR2
    if [ -n "$(ls "$2" 2>/dev/null)" ] && diff -r "$2" "$3" >/dev/null; then ok "$1"; else bad "$1 differ"; diff -rq "$2" "$3" | head -5; fi
}

"$GEN" --size 3M --ranks 6 -q -o "$W/corpus" || { echo "tracegen failed"; exit 1; }
C=$W/corpus
EV="SELECT * FROM events ORDER BY trace_id, uid"

# ingest: files one at a time, each split into parts on 3 threads; and 3
# files at once
run ingest_split env TRACELENS_PARSE_THREADS=3 TRACELENS_SPLIT_MIN=65536 TRACELENS_TIMING=1 \
    "$T" ingest -q -j 1 --db "$W/db1" "$C"/rank_*.json
n=$(grep -c "split into" "$W/ingest_split.err")
[ "$n" = 6 ] && ok "6 files parsed in parts" || bad "ingest -j 1: $n of 6 files parsed in parts"
run ingest_j3 "$T" ingest -q -j 3 --db "$W/db3" "$C"/rank_*.json
run events1 "$T" sql --db "$W/db1" --format csv "$EV"
run events3 "$T" sql --db "$W/db3" --format csv "$EV"
same "stored events (split parse against 3 files at once)" "$W/events1.out" "$W/events3.out"

# the corpus workbook: the per-rank reports, the pooled sheets and the
# collective analysis on 1 and on 6 threads
run wb1 "$T" --db "$W/db1" corpus-report --config corpus -j 1 -q --csv "$W/csv1" -o "$W/wb1.xlsx"
run wb6 "$T" --db "$W/db1" corpus-report --config corpus -j 6 -q --csv "$W/csv6" -o "$W/wb6.xlsx"
samedir "workbook sheets (-j 1 against -j 6)" "$W/csv1" "$W/csv6"

run coll1 "$T" --db "$W/db3" collective --config corpus --max_workers 1 --output_csvs_dir "$W/coll1"
run coll4 "$T" --db "$W/db3" collective --config corpus --max_workers 4 --output_csvs_dir "$W/coll4"
samedir "collective sheets (1 worker against 4)" "$W/coll1" "$W/coll4"

Q=(--table kernels --by name,rank --agg 'sum(dur),count,p90(dur),nunique(stream)' --sort name,rank --format csv)
run q1 "$T" query --db "$W/db3" --threads 1 "${Q[@]}"
run q4 "$T" query --db "$W/db3" --threads 4 "${Q[@]}"
same "query (1 thread against 4)" "$W/q1.out" "$W/q4.out"
run rows4 "$T" query --db "$W/db3" --threads 4 --table kernels --where 'dur > 5us' --sort -dur,name --top 50 --format csv
[ "$(wc -l <"$W/rows4.out")" = 51 ] && ok "query rows" || bad "query rows: $(wc -l <"$W/rows4.out") lines"

finish test_threads
