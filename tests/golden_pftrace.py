#!/usr/bin/env python3
"""golden_pftrace.py — the pftrace reports against the reference tool.

For every case of tests/golden/pftrace/cases.json (the reference's own test
inputs, each run with a set of flags; make.py there wrote the reference's
CSVs): our command on the traceEvents JSON must give the reference's CSVs
(columns by name, rows by position; an empty reference cell is not
checked; numbers within 1e-6, other text equal), and our command on the
.pftrace holding the same events (built here by pftrace_encode.py) must give
byte-identical CSVs. Genesis cases run our command on a copy of their
capture folder (with the .pftrace of their input) and compare the
workbook's sheets (written as CSVs too) with the reference's. The two
stored traces must also be equal row for row
(`tracelens sql`), and damaged .pftrace files must fail with the file and
byte offset named.

usage: golden_pftrace.py BUILD_DIR [-v] [-k CASE]
Prints per-case results and `N passed, M failed`; exit 0 when all passed.
Python 3 standard library only."""
import csv
import json
import math
import re
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD = os.path.join(HERE, "golden", "pftrace")
sys.path.insert(0, GOLD)
import pftrace_encode  # noqa: E402

EVENT_COLS = ("uid,ts,dur,name,cat,kind,pid,tid,correlation,external_id,stream,device,grid,block,args,"
              "parent,parent_py,launcher,linked")


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def number(s):
    try:
        return float(s)
    except ValueError:
        return None


def compare(ours_dir, ref_dir):
    """(cells compared, mismatched, missing, first problems)."""
    cells = bad = missing = 0
    notes = []
    for name in sorted(os.listdir(ref_dir)):
        ref = read_csv(os.path.join(ref_dir, name))
        path = os.path.join(ours_dir, name)
        if not os.path.exists(path):
            missing += sum(len(r) for r in ref[1:]) or 1
            notes.append(f"{name}: missing")
            continue
        ours = read_csv(path)
        if not ref or ref == [[]]:
            if ours not in ([], [[]]):
                bad += 1
                notes.append(f"{name}: the reference's is empty, ours is not")
            continue
        if len(ours) != len(ref):
            notes.append(f"{name}: {len(ours) - 1} rows, reference {len(ref) - 1}")
        head = ours[0] if ours else []
        for c, col in enumerate(ref[0]):
            if col not in head:
                missing += len(ref) - 1
                notes.append(f"{name}: column {col!r} missing")
                continue
            oc = head.index(col)
            for r in range(1, len(ref)):
                want = ref[r][c] if c < len(ref[r]) else ""
                if want == "":
                    continue
                cells += 1
                if r >= len(ours) or oc >= len(ours[r]):
                    missing += 1
                    continue
                got = ours[r][oc]
                a, b = number(got), number(want)
                same = (a is not None and b is not None and (abs(a - b) < 1e-6 or
                        (math.isnan(a) and math.isnan(b)))) or got == want
                if not same:
                    bad += 1
                    if len(notes) < 8:
                        notes.append(f"{name} row {r} {col}: ours {got!r}, reference {want!r}")
    return cells, bad, missing, notes


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def stored_rows(build, db, path):
    """The events rows of the stored trace of path (ingested if needed)."""
    p = run([os.path.join(build, "tracelens"), "--db", db, "ingest", path])
    if p.returncode:
        return None, p.stderr
    tid = p.stdout.split()[0]
    q = run([os.path.join(build, "tracelens"), "--db", db, "sql",
             f"SELECT {EVENT_COLS} FROM events WHERE trace_id = '{tid}' ORDER BY uid", "--format", "csv"])
    return q.stdout, q.stderr


def genesis_case(build, tmp, db, case):
    """Our genesis command on a copy of the case's capture (with the
    .pftrace of its input); (ok, cells, mismatched, missing, notes)."""
    cap = os.path.join(tmp, "genesis", case["case"])
    shutil.copytree(os.path.join(GOLD, case["capture"]), cap)
    if case["input"]:
        with open(os.path.join(GOLD, "inputs", case["input"]), encoding="utf-8") as f:
            data = pftrace_encode.encode(json.load(f))
        with open(os.path.join(cap, "kernel_trace", "kernel_results.pftrace"), "wb") as f:
            f.write(data)
    out = os.path.join(tmp, "genesis_out", case["case"])
    p = run([os.path.join(build, case["command"]), "--db", db, "--capture-dir", cap, "--output-dir", out,
             "--output_csvs_dir", os.path.join(out, "csv")] + case["flags"])
    if p.returncode:
        return False, 0, 0, 0, [f"exit {p.returncode}: {p.stderr.strip()[-300:]}"]
    cells, bad, missing, notes = compare(os.path.join(out, "csv"), os.path.join(GOLD, "expected", case["case"]))
    for f in ("genesis_perf_report.xlsx", "genesis_summary.md"):
        if not os.path.exists(os.path.join(out, f)):
            notes.append(f"{f} not written")
            bad += 1
    if os.path.exists(os.path.join(out, ".work")):
        notes.append(".work left behind without --keep-work")
        bad += 1
    return not bad and not missing, cells, bad, missing, notes


def report_dispatch(build, tmp, db, pftraces, results):
    """`tracelens report FILE.pftrace` is the HIP activity report with its
    defaults (and --traceconv is accepted, unused)."""
    pf = pftraces["fixture_full.json"]
    a, b = os.path.join(tmp, "dispatch_report"), os.path.join(tmp, "dispatch_cmd")
    p = run([os.path.join(build, "tracelens"), "--db", db, "report", pf, "--csv-dir", a])
    q = run([os.path.join(build, "TraceLens_generate_perf_report_pftrace_hip_activity"), "--db", db,
             "--trace_path", pf, "--output_csvs_dir", b, "--traceconv", "/nonexistent/traceconv"])
    ok = p.returncode == 0 and q.returncode == 0 and sorted(os.listdir(a)) == sorted(os.listdir(b)) and all(
        open(os.path.join(a, n), "rb").read() == open(os.path.join(b, n), "rb").read() for n in os.listdir(a))
    results.append(("report_dispatch", ok, [p.stderr[-300:], q.stderr[-300:]] if not ok else []))


PROTO_PREFIXES = {"TracePacket": "TP", "TrackDescriptor": "TD", "ProcessDescriptor": "PD",
                  "ThreadDescriptor": "THD", "TrackEvent": "TE", "DebugAnnotation": "DA", "InternedData": "ID"}


def proto_fields(results):
    """ingest/proto/pftrace.proto documents the fields ingest/pftrace.c
    reads: each message's field numbers there must be the numbers of the
    reader's enum entries for it (TP_* for TracePacket, ...)."""
    root = os.path.join(HERE, "..", "ingest")
    with open(os.path.join(root, "proto", "pftrace.proto"), encoding="utf-8") as f:
        proto = f.read()
    with open(os.path.join(root, "pftrace.c"), encoding="utf-8") as f:
        code = f.read()
    notes = []
    for msg, prefix in PROTO_PREFIXES.items():
        body = re.search(r"message %s \{(.*?)\n\}" % msg, proto, re.S).group(1)
        body = re.sub(r"enum \w+ \{.*?\}", "", body, flags=re.S)
        want = sorted(int(n) for n in re.findall(r"= (\d+);", body))
        got = sorted(int(n) for n in re.findall(r"\b%s_\w+ = (\d+)" % prefix, code))
        if want != got:
            notes.append(f"{msg}: .proto {want}, pftrace.c {got}")
    results.append(("proto_fields", not notes, notes))


def deep_annotation_packet(levels):
    """A packet whose slice has one annotation nested `levels` dicts deep."""
    enc = pftrace_encode
    a = enc._f_bytes(10, "k") + enc._f_varint(3, 1)
    for _ in range(levels):
        a = enc._f_bytes(10, "k") + enc._f_bytes(11, a)
    te = enc._f_varint(9, 1) + enc._f_varint(11, 1) + enc._f_bytes(4, a)
    return enc._f_bytes(1, enc._f_varint(8, 5) + enc._f_bytes(11, te))


def long_annotation_names(build, tmp, db, results):
    """Interned annotation names long enough that writing their JSON keys
    grows the reader's text pool: stored as the JSON is, every name intact."""
    events = []
    for i in range(64):
        key = f"k{i:02d}_" + "x" * (40 + 23 * i)
        events.append({"ph": "X", "name": f"op{i}", "cat": "cpu_op", "pid": 1, "tid": 1,
                       "ts": 10 * i, "dur": 5, "args": {key: i, key + "_s": "v"}})
    doc = {"traceEvents": events}
    src = os.path.join(tmp, "long_names.json")
    with open(src, "w", encoding="utf-8") as f:
        json.dump(doc, f, separators=(",", ":"), ensure_ascii=False)
    pf = os.path.join(tmp, "long_names.pftrace")
    with open(pf, "wb") as f:
        f.write(pftrace_encode.encode(doc))
    a, ea = stored_rows(build, db, src)
    b, eb = stored_rows(build, db, pf)
    results.append(("store.long_annotation_names", a is not None and a == b, [ea, eb] if a != b else []))


def bad_inputs(build, tmp, db, results):
    """Damaged .pftrace files: exit 1, the message names the file, the
    byte offset (where it is known here) and what was wrong."""
    with open(os.path.join(GOLD, "inputs", "hip_api_minimal.json"), encoding="utf-8") as f:
        good = pftrace_encode.encode(json.load(f))
    at = len(good) + 2  # the first field of a packet appended to good
    cases = {  # name: (bytes, offset or None, words of the message)
        "truncated": (good[:-3], None, "truncated TracePacket"),
        "bad_packet_tag": (good + b"\x10\x01", len(good), "expected a TracePacket"),
        "truncated_varint": (good + b"\x0a\x03\xff\xff\xff", at, "truncated varint"),
        "truncated_value_varint": (good + b"\x0a\x02\x40\xff", at, "truncated varint"),
        "long_varint": (good + b"\x0a\x0b\x40" + b"\xff" * 10, at, "more than 10 bytes"),
        "length_past_end": (good + b"\x0a\x03\x5a\x05\x00", at, "runs past the end of its message"),
        "nested_length_past_end": (good + b"\x0a\x04\x5a\x02\x22\x09", at + 2, "runs past the end"),
        "wrong_wire_type": (good + b"\x0a\x03\x42\x01\x00", at, "expected wire type varint"),
        "group": (good + b"\x0a\x01\x43", at, "unsupported wire type"),
        "nested_too_deep": (good + deep_annotation_packet(65), None, "nested more than 64 levels deep"),
    }
    for name, (data, offset, words) in cases.items():
        path = os.path.join(tmp, name + ".pftrace")
        with open(path, "wb") as f:
            f.write(data)
        p = run([os.path.join(build, "tracelens"), "--db", db, "ingest", path])
        where = f"byte {offset}:" if offset is not None else "byte "
        ok = p.returncode == 1 and path in p.stderr and where in p.stderr and words in p.stderr
        results.append((f"bad_input.{name}", ok, p.stderr.strip().splitlines()[-1:] if not ok else []))
    path = os.path.join(tmp, "nested_64.pftrace")  # the deepest accepted: 64 levels below the top
    with open(path, "wb") as f:
        f.write(good + deep_annotation_packet(64))
    p = run([os.path.join(build, "tracelens"), "--db", db, "ingest", path])
    results.append(("bad_input.nested_64_accepted", p.returncode == 0, p.stderr.strip().splitlines()[-1:]))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    verbose = "-v" in sys.argv
    only = sys.argv[sys.argv.index("-k") + 1] if "-k" in sys.argv else None
    build = os.path.abspath(args[0])
    with open(os.path.join(GOLD, "cases.json")) as f:
        cases = json.load(f)
    results = []
    totals = [0, 0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "db")
        pftraces = {}
        for case in cases:
            inp = case["input"]
            if case.get("capture"):
                continue
            if inp not in pftraces:
                src = os.path.join(GOLD, "inputs", inp)
                with open(src, encoding="utf-8") as f:
                    doc = json.load(f)
                pf = os.path.join(tmp, inp.replace(".json", ".pftrace"))
                with open(pf, "wb") as f:
                    f.write(pftrace_encode.encode(doc))
                pftraces[inp] = pf
                a, ea = stored_rows(build, db, src)
                b, eb = stored_rows(build, db, pf)
                results.append((f"store.{inp}", a is not None and a == b, [ea, eb] if a != b else []))
        for case in cases:
            name = case["case"]
            if only and only not in name:
                continue
            if case.get("capture"):
                ok, cells, bad, missing, notes = genesis_case(build, tmp, db, case)
                totals[0] += cells
                totals[1] += bad
                totals[2] += missing
                results.append((name, ok, notes))
                continue
            outs = {}
            for form, path in (("json", os.path.join(GOLD, "inputs", case["input"])),
                               ("pftrace", pftraces[case["input"]])):
                out = os.path.join(tmp, form, name)
                p = run([os.path.join(build, case["command"]), "--db", db, "--trace_path", path,
                         "--output_csvs_dir", out] + case["flags"])
                if p.returncode:
                    results.append((name, False, [f"{form}: exit {p.returncode}: {p.stderr.strip()[-300:]}"]))
                    break
                outs[form] = out
            if len(outs) < 2:
                continue
            cells, bad, missing, notes = compare(outs["json"], os.path.join(GOLD, "expected", name))
            totals[0] += cells
            totals[1] += bad
            totals[2] += missing
            same = sorted(os.listdir(outs["json"])) == sorted(os.listdir(outs["pftrace"])) and all(
                open(os.path.join(outs["json"], n), "rb").read() == open(os.path.join(outs["pftrace"], n), "rb").read()
                for n in os.listdir(outs["json"]))
            if not same:
                notes.append(".pftrace output differs from the JSON's")
            results.append((name, not bad and not missing and same, notes))
        report_dispatch(build, tmp, db, pftraces, results)
        long_annotation_names(build, tmp, db, results)
        bad_inputs(build, tmp, db, results)
        proto_fields(results)
    failed = 0
    for name, ok, notes in results:
        failed += not ok
        if verbose or not ok:
            print(f"{'ok  ' if ok else 'FAIL'} {name}")
            for n in notes:
                print(f"     {n}")
    print(f"cells compared {totals[0]}, mismatched {totals[1]}, missing {totals[2]}")
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
