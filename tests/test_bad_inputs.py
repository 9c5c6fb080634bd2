#!/usr/bin/env python3
"""The bad-input corpus: every kind of broken trace the ingest must reject
with a one-line message naming the file, the byte offset and what was
expected, a non-zero exit, and an unchanged store — while the good files of
the same command are still ingested. Usage: test_bad_inputs.py BUILD_DIR"""
import gzip, os, subprocess, sys, tempfile

from tlcheck import Checks

tl = os.path.join(sys.argv[1], "tracelens")
check = Checks()

GOOD = (b'{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,'
        b'"ts":100.5,"dur":10,"args":{"External id":1}}]}')
EV = b'{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2}'
full_gz = gzip.compress(GOOD * 1 + b" " * 100000)
BOM = b"\xef\xbb\xbf"
# ts and dur in µs; INT64_MAX ns is 9223372036854775.807 µs
INT64_MAX_US = b"9223372036854775.807"
def xev(ts, dur):
    return b'{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":' + ts + b',"dur":' + dur + b"}"
def trace(*evs):
    return b'{"traceEvents":[' + b",".join(evs) + b"]}"
# A gzip bomb: members of 64 MiB of spaces (about 1028 times smaller each)
# inside the event array, inflating past the 1 GiB floor of the ratio guard.
bomb_member = gzip.compress(b" " * (64 << 20), 9)
BOMB = gzip.compress(b'{"traceEvents":[', 9) + bomb_member * 17 + gzip.compress(b"]}", 9)
cases = {
    # name: (bytes, substring the message must contain)
    "empty.json": (b"", "empty file"),
    "spaces.json": (b"   \n", "empty file"),
    "not_json.json": (b"hello world", "not a trace"),
    "array.json": (b"[1, 2, 3]", "expected '{'"),
    "no_trace_events.json": (b'{"schemaVersion": 1}', "no \"traceEvents\""),
    "truncated.json": (GOOD[:-20], "end of input"),
    "truncated_in_string.json": (b'{"traceEvents":[{"ph":"X","name":"abc', "unterminated string"),
    "truncated.json.gz": (full_gz[: len(full_gz) // 2], "truncated gzip"),
    "corrupt.json.gz": (full_gz[:20] + bytes(b ^ 0x5A for b in full_gz[20:60]) + full_gz[60:], "byte"),
    "wrong_type_ts.json": (b'{"traceEvents":[{"ph":"X","ts":"12","dur":1}]}', "expected a number"),
    "wrong_type_events.json": (b'{"traceEvents":{"a":1}}', "must be an array"),
    "wrong_type_pid.json": (b'{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":[1]}]}', "expected an integer or a string"),
    "out_of_range_ts.json": (b'{"traceEvents":[{"ph":"X","ts":1e300,"dur":1}]}', "out of range"),
    "out_of_range_int.json": (b'{"traceEvents":[{"ph":"X","ts":1,"dur":1,"tid":123456789012345678901}]}', "out of range"),
    "negative_dur.json": (b'{"traceEvents":[{"ph":"X","ts":1,"dur":-1}]}', "negative"),
    "invalid_utf8.json": (b'{"traceEvents":[{"ph":"X","name":"\xc3\x28","ts":1,"dur":1}]}', "invalid UTF-8"),
    "control_char.json": (b'{"traceEvents":[{"ph":"X","name":"a\x01b","ts":1,"dur":1}]}', "control character"),
    "bad_escape.json": (b'{"traceEvents":[{"ph":"X","name":"a\\qb","ts":1,"dur":1}]}', "invalid escape"),
    "deep_nesting.json": (b'{"traceEvents":[],"x":' + b"[" * 5000 + b"]" * 5000 + b"}", "nesting deeper"),
    "duplicate_key.json": (b'{"traceEvents":[{"ph":"X","ts":1,"ts":2,"dur":1}]}', "duplicate key"),
    "duplicate_events.json": (b'{"traceEvents":[],"traceEvents":[]}', "duplicate key"),
    "trailing_garbage.json": (GOOD + b" }", "end of input after"),
    "missing_ph.json": (b'{"traceEvents":[' + EV.replace(b'"ph":"X",', b"") + b"]}", "without \"ph\""),
    "missing_comma.json": (b'{"traceEvents":[' + EV + EV + b"]}", "',' or ']'"),
    # time arithmetic at the int64 edges: an error, never a wrapped value
    "ts_us_to_ns_overflow.json": (trace(xev(b"9223372036854776", b"1")), "out of range"),
    "dur_us_to_ns_overflow.json": (trace(xev(b"1", b"1e16")), "out of range"),
    "ts_max_ns_plus_dur.json": (trace(xev(INT64_MAX_US, b"0.001")), "\"ts\" + \"dur\""),
    "ts_plus_dur_max_ns.json": (trace(xev(b"1", INT64_MAX_US)), "\"ts\" + \"dur\""),
    "ts_plus_dur_overflow.json": (trace(xev(b"5000000000000000", b"5000000000000000")), "\"ts\" + \"dur\""),
    "negative_dur_ns.json": (trace(xev(b"1", b"-0.001")), "negative"),
    "negative_dur_min_ns.json": (trace(xev(b"1", b"-" + INT64_MAX_US)), "negative"),
    "negative_dur_us_overflow.json": (trace(xev(b"1", b"-9223372036854775.809")), "out of range"),
    "span_overflow.json": (trace(xev(b"-" + INT64_MAX_US, b"0"), xev(b"9223372036854775.000", b"0")),
                           "out of the int64 ns range"),
    # a byte-order mark is skipped, but offsets count from the file start
    "bom_bad.json": (BOM + b'{"traceEvents":x}', "byte 18"),
    "bomb.json.gz": (BOMB, "a gzip bomb?"),
}
# refused after parsing, by event number rather than byte offset
NO_OFFSET = {"span_overflow.json"}

def run(db, *paths):
    return subprocess.run([tl, "--db", db, "ingest", "-q", *paths], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "db")
    good = os.path.join(tmp, "good.json")
    open(good, "wb").write(GOOD)
    r = run(db, good)
    check(r.returncode == 0, "good file ingests")
    before = subprocess.run([tl, "--db", db, "ls"], capture_output=True, text=True).stdout
    data_mdb = os.path.join(db, "data.mdb")
    for name, (data, want) in sorted(cases.items()):
        p = os.path.join(tmp, name)
        open(p, "wb").write(data)
        r = run(db, p)
        msg = r.stderr.strip()
        lines = [l for l in msg.splitlines() if l]
        ok = (r.returncode == 1 and len(lines) == 1 and name in msg and want in msg
              and ("byte" in msg or "empty file" in msg or name in NO_OFFSET))
        check(ok, "%s: rc=%d msg=%r (wanted %r)" % (name, r.returncode, msg, want))
        after = subprocess.run([tl, "--db", db, "ls"], capture_output=True, text=True).stdout
        check(after == before, "%s: store changed" % name)
        if ok:
            print("ok  %-26s %s" % (name, msg[:110]))
    # a trace that starts with a UTF-8 byte-order mark is read, plain or gzip
    for bname, data in (("bom.json", BOM + GOOD.replace(b"aten::mm", b"aten::bom")),
                        ("bom.json.gz", gzip.compress(BOM + GOOD.replace(b"aten::mm", b"aten::bomgz")))):
        bdb = os.path.join(tmp, "db-" + bname)
        p = os.path.join(tmp, bname)
        open(p, "wb").write(data)
        r = run(bdb, p)
        check(r.returncode == 0 and r.stdout.split("\t")[1:2] == ["1"], "%s: rc=%d out=%r err=%r"
              % (bname, r.returncode, r.stdout, r.stderr))
    # promoted integer args as the reference tolerates them (ROCm 6.2 writes
    # "stream": "0x0"): a decimal or 0x-hex string is that integer, any other
    # string or type is no value, and the args text keeps it verbatim
    kev = (b'{"ph":"X","cat":"kernel","name":"k%d","pid":1,"tid":1,"ts":%d,"dur":1,'
           b'"args":{"stream":%s,"correlation":%s}}')
    vals = [(b'"0x0"', b'"12"', "0", "12"), (b'"12"', b"1.5", "12", ""), (b'"0x1F"', b"true", "31", ""),
            (b'"abc"', b'{"a":[1]}', "", "")]
    p = os.path.join(tmp, "string_args.json")
    open(p, "wb").write(trace(*(kev % (i, i * 2 + 1, s, c) for i, (s, c, _, _) in enumerate(vals))))
    sdb = os.path.join(tmp, "db-string-args")
    r = run(sdb, p)
    check(r.returncode == 0, "string_args.json: rc=%d err=%r" % (r.returncode, r.stderr))
    r = subprocess.run([tl, "--db", sdb, "sql", "--format", "csv",
                        "SELECT stream, correlation, args FROM kernels ORDER BY ts"], capture_output=True, text=True)
    rows = [l.split(",", 2) for l in r.stdout.splitlines()[1:]]
    check([(x[0], x[1]) for x in rows] == [(want_s, want_c) for _, _, want_s, want_c in vals],
          "string args: stream/correlation %r" % rows)
    check(len(rows) == 4 and '"abc"' in rows[3][2] and '{""a"":[1]}' in rows[3][2],
          "string args: args text verbatim %r" % rows[3:])
    # a bad file among good ones: the good ones still go in
    g2 = os.path.join(tmp, "good2.json")
    open(g2, "wb").write(GOOD.replace(b"aten::mm", b"aten::bmm"))
    r = run(db, os.path.join(tmp, "truncated.json"), g2)
    check(r.returncode == 1 and r.stdout.count("\t") >= 2, "mixed command ingests the good file and exits 1")
    check(len(subprocess.run([tl, "--db", db, "ls"], capture_output=True, text=True).stdout.splitlines()) == 2,
          "two traces stored after the mixed command")
    # same file again: no change, prints the existing id
    r1 = run(db, good)
    check(r1.returncode == 0 and "already stored" in r1.stdout, "re-ingest is a no-op that prints the id")
print("%d passed, %d failed" % (check.passed, check.failed))
sys.exit(1 if check.failed else 0)
