#!/bin/bash
# Store lists: an 8-rank generated corpus ingested into one store and into
# three shards (one trace in two of them) must read the same through every
# read command: ls, info, query, sql, report, diff, compare; a list given
# as --db A --db B --db C and as --db @FILE. Writes to a list are refused.
# Usage: test_shards.sh BUILD_DIR
set -u
B=${1:?usage: test_shards.sh BUILD_DIR}
T=$B/tracelens
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
same() { # NAME FILE1 FILE2
    if [ -s "$2" ] && cmp -s "$2" "$3"; then ok; else no "$1 differs"; diff "$2" "$3" | head -5; fi
}

"$B/tracegen" --size 200K --ranks 8 -q -o "$W/corpus" || { echo "tracegen failed"; exit 1; }
C=$W/corpus
"$T" ingest -q --db "$W/all" "$C"/rank_*.json >/dev/null 2>&1
"$T" ingest -q --db "$W/s0" "$C"/rank_0.json "$C"/rank_1.json "$C"/rank_2.json >/dev/null 2>&1
"$T" ingest -q --db "$W/s1" "$C"/rank_2.json "$C"/rank_3.json "$C"/rank_4.json >/dev/null 2>&1
"$T" ingest -q --db "$W/s2" "$C"/rank_5.json "$C"/rank_6.json "$C"/rank_7.json >/dev/null 2>&1
L=(--db "$W/s0" --db "$W/s1" --db "$W/s2")
printf '# the three shards\ns0\n\n%s\n%s/s2\n' s1 "$W" >"$W/list.txt"

# ls: ids, formats, ranks, events, spans and paths (the ingest time differs)
"$T" ls --db "$W/all" | cut -f1-6 >"$W/ls1"
"$T" ls "${L[@]}" | cut -f1-6 >"$W/ls2"
"$T" ls --db "@$W/list.txt" | cut -f1-6 >"$W/ls3"
same "ls (--db x3)" "$W/ls1" "$W/ls2"
same "ls (--db @FILE)" "$W/ls1" "$W/ls3"
"$T" --db "$W/s0" --db="$W/s1" --db "$W/s2" ls | cut -f1-6 >"$W/ls4"
same "ls (global --db x3)" "$W/ls1" "$W/ls4"
[ "$(wc -l <"$W/ls2")" = 8 ] && ok || no "ls: rank_2 (in two shards) is not listed once"

ID=$(grep rank_6 "$W/ls1" | cut -f1)
ID2=$(grep rank_1 "$W/ls1" | cut -f1)
"$T" info --db "$W/all" "${ID:0:8}" | grep -v ingest_time >"$W/info1"
"$T" info "${L[@]}" "${ID:0:8}" | grep -v ingest_time >"$W/info2"
same "info" "$W/info1" "$W/info2"

Q=(--table kernels --by name,rank --agg 'sum(dur),count,p90(dur)' --format csv)
"$T" query --db "$W/all" "${Q[@]}" >"$W/q1" 2>&1
"$T" query "${L[@]}" "${Q[@]}" >"$W/q2" 2>&1
same "query" "$W/q1" "$W/q2"
"$T" query --db "$W/all" --table ops --trace rank:2-5 --by name --agg 'sum(kernel_time),nunique(rank)' --format csv >"$W/q3" 2>&1
"$T" query --db "@$W/list.txt" --table ops --trace rank:2-5 --by name --agg 'sum(kernel_time),nunique(rank)' --format csv >"$W/q4" 2>&1
same "query --trace" "$W/q3" "$W/q4"

S="SELECT t.rank, k.name, sum(k.dur) AS ns, count(*) AS n FROM kernels k JOIN traces t ON t.trace_id = k.trace_id
   GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2"
"$T" sql --db "$W/all" --format csv "$S" >"$W/sql1" 2>&1
"$T" sql "${L[@]}" --format csv "$S" >"$W/sql2" 2>&1
same "sql" "$W/sql1" "$W/sql2"
"$T" sql --db "$W/all" --format csv "SELECT type, sum(time_ms) FROM gpu_timeline GROUP BY 1 ORDER BY 1" >"$W/sql3" 2>&1
"$T" sql --db "@$W/list.txt" --format csv "SELECT type, sum(time_ms) FROM gpu_timeline GROUP BY 1 ORDER BY 1" >"$W/sql4" 2>&1
same "sql (report sheets)" "$W/sql3" "$W/sql4"
"$T" sql "${L[@]}" "ATTACH '$W/x.db' AS x" >/dev/null 2>"$W/att"
grep -q "only reading is allowed" "$W/att" && ok || no "sql over a list: ATTACH is not refused"

"$T" report --db "$W/all" "$ID" --csv-dir "$W/r1" >/dev/null 2>&1
"$T" report "${L[@]}" "$ID" --csv-dir "$W/r2" >/dev/null 2>&1
if [ -n "$(ls "$W/r1" 2>/dev/null)" ] && diff -r "$W/r1" "$W/r2" >/dev/null; then ok; else no "report"; fi
"$T" diff --db "$W/all" "$ID" "$ID2" >"$W/d1" 2>&1
"$T" diff "${L[@]}" "$ID" "$ID2" >"$W/d2" 2>&1
same "diff" "$W/d1" "$W/d2"
"$T" compare --db "$W/all" "$ID" "$ID2" --output_csvs_dir "$W/c1" >/dev/null 2>&1
"$T" compare "${L[@]}" "$ID" "$ID2" --output_csvs_dir "$W/c2" >/dev/null 2>&1
if [ -n "$(ls "$W/c1" 2>/dev/null)" ] && diff -r "$W/c1" "$W/c2" >/dev/null; then ok; else no "compare"; fi

# a list only reads
"$T" rm "${L[@]}" "$ID" 2>"$W/rm"
[ $? -ne 0 ] && grep -q "not the store list" "$W/rm" && ok || no "rm on a list is not refused"
[ "$("$T" ls "${L[@]}" | wc -l)" = 8 ] && ok || no "rm on a list removed something"
"$T" ls --db "@$W/missing.txt" >/dev/null 2>"$W/miss"
[ $? -ne 0 ] && grep -q "cannot read the store list" "$W/miss" && ok || no "a missing list file is not named"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
