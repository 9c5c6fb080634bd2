#!/usr/bin/env bash
# Crash safety: kill -9 an ingest at several instants (parse, tree, commit)
# and check that the store holds exactly the traces committed before, opens
# without repair, and that the killed trace ingests cleanly afterwards.
# Usage: test_crash.sh BUILD_DIR
. "$(dirname "$0")/checks.sh" "$1"

"$GEN" --size 200K --seed 11 -o "$tmp/small.json" -q || { echo "tracegen failed"; exit 1; }
"$GEN" --size 96M --seed 12 -o "$tmp/big.json" -q || { echo "tracegen failed"; exit 1; }
db=$tmp/db
"$TL" --db "$db" ingest -q "$tmp/small.json" >/dev/null || bad "small ingest"
before=$("$TL" --db "$db" ls | cut -f1)

# time a full ingest to spread the kill points over it
t0=$(date +%s%N)
"$TL" --db "$tmp/db_timing" ingest -q "$tmp/big.json" >/dev/null
t1=$(date +%s%N)
full_ms=$(( (t1 - t0) / 1000000 ))
echo "full ingest of 96 MB takes ${full_ms} ms"

for pct in 5 20 40 60 75 85 92 97; do
  delay_ms=$(( full_ms * pct / 100 ))
  "$TL" --db "$db" ingest -q "$tmp/big.json" >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  now=$("$TL" --db "$db" ls | cut -f1)
  if [ "$now" = "$before" ]; then
    ok "killed at ${pct}%: store has exactly the traces committed before"
  elif [ "$(echo "$now" | wc -l)" = 2 ] && echo "$now" | grep -q "$before"; then
    # the kill came after the commit: then the trace must be complete
    id=$(echo "$now" | grep -v "$before")
    if "$TL" --db "$db" info "$id" | grep -q '"events":'; then
      ok "killed at ${pct}% after the commit: the trace is complete"
      "$TL" --db "$db" rm "$id" >/dev/null
    else bad "killed at ${pct}%: incomplete trace visible"; fi
  else
    bad "killed at ${pct}%: store lists: $now"
  fi
done
# the store opens and ingests normally after all that
if "$TL" --db "$db" ingest -q "$tmp/big.json" >/dev/null && [ "$("$TL" --db "$db" ls | wc -l)" = 2 ]; then
  ok "re-ingest after the kills succeeds"
else bad "re-ingest after the kills"; fi
a=$("$TL" --db "$db" info "$("$TL" --db "$db" ls | grep big.json | cut -f1)" | grep -o '"events":[0-9]*')
b=$("$TL" --db "$tmp/db_timing" info "$("$TL" --db "$tmp/db_timing" ls | cut -f1)" | grep -o '"events":[0-9]*')
[ "$a" = "$b" ] && ok "same event count as an uninterrupted ingest ($a)" || bad "event count $a vs $b"
finish test_crash
