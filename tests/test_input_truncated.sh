#!/usr/bin/env bash
# An input file truncated while `tracelens ingest` reads it: the command
# never dies of a signal (inputs are mapped; a page past the new end used to
# raise SIGBUS), the file is reported with its name and where its data
# ended, nothing of it is stored, and the other inputs of the command are
# still ingested. Truncations are spread over the parse of a plain and of
# a gzip trace; at least one must land while the file is read.
# Usage: test_input_truncated.sh BUILD_DIR
. "$(dirname "$0")/checks.sh" "$1"

"$GEN" --size 128M --seed 21 -o "$tmp/src.json" -q || { echo "tracegen failed"; exit 1; }
"$GEN" --size 128M --seed 21 --gzip -o "$tmp/src.json.gz" -q || { echo "tracegen failed"; exit 1; }
"$GEN" --size 200K --seed 22 -o "$tmp/other.json" -q || { echo "tracegen failed"; exit 1; }

hits=0
for kind in json json.gz; do
  for delay in 0.01 0.05 0.1 0.2 0.4; do
    cp "$tmp/src.$kind" "$tmp/t.$kind"
    rm -rf "$tmp/db"
    "$TL" --db "$tmp/db" ingest -q "$tmp/t.$kind" "$tmp/other.json" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    sleep "$delay"
    truncate -s 1000000 "$tmp/t.$kind"
    wait $pid
    rc=$?
    if [ $rc -ge 128 ]; then bad "$kind truncated after ${delay}s: killed by signal $((rc - 128))"; continue; fi
    stored=$("$TL" --db "$tmp/db" ls 2>/dev/null | wc -l)
    if [ $rc = 1 ] && grep -q "t.$kind: the file shrank while it was read (.* no data at byte 1000000)" "$tmp/err"; then
      hits=$((hits + 1))
      [ "$stored" = 1 ] && ok "$kind truncated after ${delay}s: exit 1, named, the other input stored" \
        || bad "$kind truncated after ${delay}s: $stored traces stored, expected only the other input"
    elif [ $rc = 0 ] && [ "$stored" = 2 ]; then
      ok "$kind truncated after ${delay}s: the ingest had finished before (exit 0)"
    elif [ $rc = 1 ] && [ "$stored" = 1 ]; then
      ok "$kind truncated after ${delay}s: truncated before it was opened (exit 1: $(head -c 160 "$tmp/err"))"
    else
      bad "$kind truncated after ${delay}s: exit $rc, $stored stored: $(head -c 300 "$tmp/err")"
    fi
  done
done
[ $hits -ge 1 ] && ok "$hits truncations landed during the read" || bad "no truncation landed during the read"
finish test_input_truncated
