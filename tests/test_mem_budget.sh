#!/usr/bin/env bash
# The PyTorch report under a memory budget (TRACELENS_MEM_BUDGET,
# base/bigmem.c): a trace whose events pass the budget keeps its
# per-event arrays in scratch files whose pages are trimmed from the
# resident set, and its workbook is byte for byte the one made without a
# budget. A trace under the budget, or the budget off, trims nothing.
# Usage: test_mem_budget.sh BUILD_DIR
. "$(dirname "$0")/checks.sh" "$1"

"$GEN" --size 256M --seed 5 -o "$tmp/t.json" -q || { echo "tracegen failed"; exit 1; }
"$TL" --db "$tmp/db" ingest -q "$tmp/t.json" >/dev/null || { echo "ingest failed"; exit 1; }
id=$("$TL" --db "$tmp/db" ls | cut -f1)

report() { # NAME BUDGET: the workbook NAME.xlsx, the memory marks in NAME.err
  TRACELENS_MEM=1 TRACELENS_MEM_BUDGET=$2 "$TL" --db "$tmp/db" report "$id" \
    --output_xlsx_path "$tmp/$1.xlsx" >/dev/null 2>"$tmp/$1.err"
}
report off off; rc_off=$?
report on 8M; rc_on=$?
report under 4G; rc_under=$?
[ $rc_off = 0 ] && [ $rc_on = 0 ] && [ $rc_under = 0 ] && ok "three reports: exit 0" \
  || bad "reports exited $rc_off (off), $rc_on (8M), $rc_under (4G)"
cmp -s "$tmp/off.xlsx" "$tmp/on.xlsx" && ok "8M budget: the workbook is identical" \
  || bad "8M budget: the workbook differs from the one without a budget"
cmp -s "$tmp/off.xlsx" "$tmp/under.xlsx" && ok "4G budget: the workbook is identical" \
  || bad "4G budget: the workbook differs"
grep -q "^mem: written .* trims=[1-9]" "$tmp/on.err" && ok "8M budget: pages were trimmed" \
  || bad "8M budget: no trims reported: $(grep '^mem: written' "$tmp/on.err")"
for n in off under; do
  grep -q "trims=" "$tmp/$n.err" && bad "$n: trims reported with no budget in force" || ok "$n: nothing trimmed"
done
finish test_mem_budget
