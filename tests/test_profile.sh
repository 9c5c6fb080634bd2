#!/bin/bash
# The stage profile: TL_PROFILE=1 and --profile print the stages, the
# threads and the machine-readable summary line on stderr for ingest and
# corpus-report; without them nothing is printed.
# Usage: test_profile.sh BUILD_DIR
set -u
B=${1:?usage: test_profile.sh BUILD_DIR}
T=$B/tracelens
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
has() { grep -q -- "$2" "$1" && ok || no "$3"; }

"$B/tracegen" --size 200K --ranks 4 -q -o "$W/c/corpus" || { echo "tracegen failed"; exit 1; }
TL_PROFILE=1 "$T" ingest -q -j 2 --db "$W/db" "$W/c/corpus" >/dev/null 2>"$W/p1"
has "$W/p1" "ingest: parse+seal *parallel *5 " "ingest: no parallel stage with its 5 calls"
has "$W/p1" "ingest: commit (writer) *serial" "ingest: no serial writer stage"
has "$W/p1" "^profile: [0-9]* *writer " "ingest: no writer thread row"
grep -Eq '^profile: wall_s=[0-9.]+ cpu_s=[0-9.]+ cores=[0-9.]+ serial_s=[0-9.]+ serial_cpu_s=[0-9.]+ parallel_cpu_s=[0-9.]+ serial_fraction=0\.[0-9]{4} amdahl_max=' "$W/p1" &&
    ok || no "ingest: no summary line"
"$T" corpus-report -q --profile --db "$W/db" --config corpus -o "$W/w.xlsx" >/dev/null 2>"$W/p2"
has "$W/p2" "corpus: rank report *parallel *4 " "corpus-report: no rank stage with its 4 calls"
has "$W/p2" "xlsx: sheet XML + deflate *parallel" "corpus-report: no parallel sheet writing stage"
has "$W/p2" "xlsx: zip entry write *parallel" "corpus-report: no parallel zip entry stage"
has "$W/p2" "serial_fraction=" "corpus-report: no summary line"
grep -Eq 'main_unspanned_cpu_s=[0-9.]+ serial_cpu_fraction=[01]\.[0-9]{4}$' "$W/p2" && ok || no "corpus-report: no CPU serial fraction"
has "$W/p2" "corpus: op-group merge *serial" "corpus-report: no serial op-group merge stage"
"$T" ls --db "$W/db" >/dev/null 2>"$W/p3"
[ ! -s "$W/p3" ] && ok || no "a run without TL_PROFILE printed a profile"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
