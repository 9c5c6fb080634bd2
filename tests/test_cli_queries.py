#!/usr/bin/env python3
"""test_cli_queries.py — the query items of the CLI, each from the command
line over a small store built from the in-repo B200 window (two traces:
the file and a copy with another gzip header, so another content hash):

  - `tracelens label` sets, changes and removes labels after ingest (the
    catalog only: the columns answer the same), with its exit codes (an
    ambiguous prefix lists the candidates), and
    `ls --labels` / `ls --label KEY` show them;
  - `query --pivot` puts runs side by side (values equal to the grouped
    query's), in every output format;
  - `--units` on query and sql, ms by default in the table format, ns as
    stored in csv/jsonl;
  - table text is not cut when piped, and is on a terminal;
  - `-o FILE` picks the format from the extension (query and sql);
  - the report sheets' spaced headers name columns in SQL, an unknown
    double-quoted name is an error, and `sql --schema` lists every table.

usage: test_cli_queries.py BUILD_DIR
"""
import csv
import io
import json
import os
import pty
import subprocess
import sys
import tempfile

from tlcheck import Checks

check = Checks()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "tests", "golden", "b200_eager_window", "b200_eager_window.json.gz")


def run(*args):
    return subprocess.run([TL, "--db", DB, *args], capture_output=True, text=True, timeout=120)


def under_pty(argv):
    """Everything argv writes with stdout on a pseudo-terminal."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode("utf-8", "replace")


def csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


def ids_and_labels():
    """{id: labels text} from ls --labels."""
    r = run("ls", "--labels")
    return {line.split("\t")[0]: line.split("\t")[-1] for line in r.stdout.splitlines()}


def test_label(a, b):
    before = run("query", "--by", "trace_id", "--agg", "count,sum(dur)", "--format", "csv").stdout
    r = run("label", a[:6], "bs=8", "set=x")
    check(r.returncode == 0 and r.stdout.strip() == a + "\tbs=8,set=x", "label set: %r %r" % (r.stdout, r.stderr))
    r = run("label", a, "set=y")
    check(r.stdout.strip() == a + "\tbs=8,set=y", "label change: %r" % r.stdout)
    r = run("label", a, "set=", "tmp=1", "--rm", "tmp")
    check(r.stdout.strip() == a + "\tbs=8", "label remove (KEY= and --rm): %r" % r.stdout)
    r = run("label", b, "bs=16", "set=x")
    check(r.returncode == 0, "label b: %r" % r.stderr)
    labels = ids_and_labels()
    check(labels.get(a) == "bs=8" and labels.get(b) == "bs=16,set=x", "ls --labels: %r" % labels)
    r = run("ls", "--label", "set", "--label", "bs")
    cols = {line.split("\t")[0]: line.split("\t")[-2:] for line in r.stdout.splitlines()}
    check(cols.get(a) == ["-", "8"] and cols.get(b) == ["x", "16"], "ls --label KEY columns: %r" % cols)
    r = run("label", "label:set=x", "run=r1")
    check(r.stdout.strip() == b + "\tbs=16,set=x,run=r1", "label by selector: %r" % r.stdout)
    r = run("label", a)
    check(r.stdout.strip() == a + "\tbs=8", "label without edits prints: %r" % r.stdout)
    # the catalog changed, the columns did not
    after = run("query", "--by", "trace_id", "--agg", "count,sum(dur)", "--format", "csv").stdout
    check(before == after and before.count("\n") == 3, "columns unchanged by label:\n%s\n%s" % (before, after))
    r = run("query", "--trace", "label:bs=16", "--table", "traces", "--select", "trace_id", "--format", "csv")
    check(r.stdout.split() == ["trace_id", b], "query --trace label: sees the new label: %r" % r.stdout)
    r = run("sql", "--format", "csv", "SELECT trace_id, label_bs FROM traces ORDER BY label_bs")
    check(csv_rows(r.stdout)[1:] == [[b, "16"], [a, "8"]], "sql label_KEY sees the new labels: %r" % r.stdout)
    info = json.loads(run("info", a).stdout)
    check(info["catalog"]["labels"] == {"bs": "8"}, "info labels: %r" % info["catalog"]["labels"])
    check(run("check").returncode == 0, "check after label")
    # exit codes
    check(run("label", a, "novalue").returncode == 2, "edit without '=' exits 2")
    check(run("label", a, "=v").returncode == 2, "empty key exits 2")
    check(run("label").returncode == 2, "no trace exits 2")
    check(run("label", "ffffffffffffffff", "k=v").returncode == 4, "unknown id exits 4")
    check(run("label", "label:nope=1", "k=v").returncode == 4, "selector matching nothing exits 4")
    check(run("label", "bogus:1", "k=v").returncode == 2, "bad selector exits 2")
    missing = subprocess.run([TL, "--db", DB + "-none", "label", a, "k=v"], capture_output=True, text=True)
    check(missing.returncode == 3 and not os.path.exists(DB + "-none"), "label on no store exits 3, creates none")


def test_ambiguous(tmp):
    """Two tiny traces whose ids share the prefix 0b2a (found once by
    ingesting 1,000 such files): the prefix lists both and changes none."""
    d = os.path.join(tmp, "amb")
    os.mkdir(d)
    for n in (403, 597):
        event = {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 0}
        with open(os.path.join(d, "%04d.json" % n), "w") as f:
            f.write(json.dumps({"traceEvents": [event], "n": n}))
    db = os.path.join(tmp, "ambdb")
    subprocess.run([TL, "--db", db, "ingest", "-q", d], capture_output=True)
    ids = [line.split("\t")[0] for line in
           subprocess.run([TL, "--db", db, "ls"], capture_output=True, text=True).stdout.splitlines()]
    check(len(ids) == 2 and all(i.startswith("0b2a") for i in ids), "two ids sharing 0b2a: %r" % ids)
    r = subprocess.run([TL, "--db", db, "label", "0b2a", "k=v"], capture_output=True, text=True)
    check(r.returncode == 4 and "ambiguous" in r.stderr and all(i in r.stderr for i in ids),
          "an ambiguous prefix lists the candidates, exit 4: %r" % r.stderr)
    r = subprocess.run([TL, "--db", db, "ls", "--labels"], capture_output=True, text=True)
    check(all(line.endswith("\t-") for line in r.stdout.splitlines()), "nothing labelled: %r" % r.stdout)


def test_pivot(a, b):
    long = csv_rows(run("query", "--by", "name,label.bs", "--agg", "sum(dur)", "--format", "csv").stdout)
    want = {}
    for name, bs, total in long[1:]:
        want.setdefault(name, {})[bs] = total
    r = run("query", "--by", "name", "--agg", "sum(dur)", "--pivot", "label.bs", "--format", "csv")
    rows = csv_rows(r.stdout)
    check(rows and rows[0] == ["name", "bs=8", "bs=16"], "pivot header (values sorted by number): %r" % rows[:1])
    got = {row[0]: {k: v for k, v in (("8", row[1]), ("16", row[2])) if v != ""} for row in rows[1:]}
    check(got == want and len(got) > 10, "pivot cells equal the grouped query's")
    # several aggregates, a trace id pivot, --top on pivoted rows
    r = run("query", "--by", "name", "--agg", "sum(dur),count", "--pivot", "trace_id", "--top", "3", "--format", "csv")
    rows = csv_rows(r.stdout)
    check(rows[0] == ["name"] + ["%s: %s" % (t, g) for t in sorted([a, b]) for g in ("sum(dur)", "count")],
          "pivot by trace_id, two aggregates: %r" % rows[:1])
    check(len(rows) == 4, "--top counts pivoted rows: %d" % len(rows))
    # every output form
    d = tempfile.mkdtemp(dir=TMP)
    for ext in ("csv", "json", "xlsx"):
        out = os.path.join(d, "side." + ext)
        r = run("query", "--by", "name", "--agg", "sum(dur)", "--pivot", "label.bs", "-o", out)
        check(r.returncode == 0 and os.path.getsize(out) > 100, "pivot -o %s" % ext)
    first = json.loads(open(os.path.join(d, "side.json")).readline())
    check(list(first) == ["name", "bs=8", "bs=16"], "pivot json keys: %r" % list(first))
    r = run("query", "--by", "name", "--agg", "sum(dur)", "--pivot", "name,trace_id")
    check(r.returncode == 2 and "--pivot" in r.stderr, "two pivot columns exit 2")
    r = run("query", "--by", "name", "--pivot", "nosuch")
    check(r.returncode == 2 and "nosuch" in r.stderr, "unknown pivot column exits 2")


def test_units():
    ns = csv_rows(run("query", "--select", "name,dur", "--sort", "-dur", "--top", "3", "--format", "csv").stdout)
    check(ns[0] == ["name", "dur"] and all(v.isdigit() for _, v in ns[1:]), "csv keeps integer ns: %r" % ns[:2])
    us = csv_rows(run("query", "--select", "name,dur", "--sort", "-dur", "--top", "3", "--units", "us",
                      "--format", "csv").stdout)
    check(us[0] == ["name", "dur (us)"], "--units us header: %r" % us[0])
    check([float(r[1]) for r in us[1:]] == [int(r[1]) / 1e3 for r in ns[1:]], "--units us values")
    mu = run("query", "--select", "dur", "--top", "1", "--units", "µs", "--format", "csv").stdout
    check(mu.startswith("dur (us)"), "µs accepted: %r" % mu)
    agg = csv_rows(run("query", "--agg", "sum(dur),count", "--units", "ms", "--format", "csv").stdout)
    total_ns = int(csv_rows(run("query", "--agg", "sum(dur)", "--format", "csv").stdout)[1][0])
    check(agg[0] == ["sum(dur) (ms)", "count"] and abs(float(agg[1][0]) - total_ns / 1e6) < 1e-9,
          "aggregate of a time in ms, count untouched: %r" % agg)
    table = run("query", "--agg", "sum(dur),count").stdout
    check("sum(dur) (ms)" in table, "table format defaults to ms: %r" % table)
    check(run("query", "--units", "h").returncode == 2, "unknown unit exits 2")
    s = csv_rows(run("sql", "--units", "us", "--format", "csv",
                     "SELECT sum(k.dur), sum(dur) AS total_ns, count(*) AS n FROM kernels k").stdout)
    check(s[0] == ["sum(k.dur) (us)", "total_us", "n"] and abs(float(s[1][0]) - total_ns / 1e3) < 1e-6,
          "sql --units: %r" % s)
    s = csv_rows(run("sql", "--format", "csv", "SELECT sum(dur) FROM kernels").stdout)
    check(s == [["sum(dur)"], [str(total_ns)]], "sql csv keeps ns: %r" % s)
    check("sum(dur) (ms)" in run("sql", "SELECT sum(dur) FROM kernels").stdout, "sql table defaults to ms")
    check(run("sql", "--units", "x", "SELECT 1").returncode == 2, "sql unknown unit exits 2")
    spans = [line.split("\t")[4] for line in run("ls").stdout.splitlines()]
    spans_ns = [line.split("\t")[4] for line in run("ls", "--units", "ns").stdout.splitlines()]
    check(all(s.endswith(" ms") for s in spans) and all(s.endswith(" ns") for s in spans_ns) and
          [float(s[:-3]) for s in spans] == [round(int(s[:-3]) / 1e6, 3) for s in spans_ns],
          "ls: span in ms by default, --units ns: %r %r" % (spans, spans_ns))
    check(run("ls", "--units", "h").returncode == 2, "ls unknown unit exits 2")


def test_piped_and_terminal():
    name = run("sql", "--format", "csv", "SELECT name FROM kernels ORDER BY length(name) DESC LIMIT 1").stdout
    name = csv_rows(name)[1][0]
    check(len(name) > 120, "a long kernel name to test with (%d)" % len(name))
    piped = run("query", "--select", "name", "--where", "name = '%s'" % name.replace("'", "''")).stdout
    check(name in piped, "query: piped table text is not cut")
    piped = run("sql", "SELECT name FROM kernels ORDER BY length(name) DESC LIMIT 1").stdout
    check(name in piped, "sql: piped table text is not cut")
    tty = under_pty([TL, "--db", DB, "sql", "SELECT name, dur FROM kernels ORDER BY length(name) DESC LIMIT 1"])
    check(name not in tty and "…" in tty and "dur (ms)" in tty, "terminal: text cut, times in ms: %r" % tty[:300])


def test_output_by_extension():
    d = tempfile.mkdtemp(dir=TMP)
    for cmd in (["query", "--by", "name", "--agg", "count"], ["sql", "SELECT name, count(*) FROM kernels GROUP BY 1"]):
        for ext, probe in (("csv", lambda b: b.split(b"\n")[0].count(b",") == 1),
                           ("jsonl", lambda b: "name" in json.loads(b.split(b"\n")[0])),
                           ("json", lambda b: "name" in json.loads(b.split(b"\n")[0])),
                           ("xlsx", lambda b: b[:2] == b"PK")):
            out = os.path.join(d, "%s.%s" % (cmd[0], ext))
            r = run(*cmd, "-o", out)
            ok = r.returncode == 0 and os.path.exists(out) and probe(open(out, "rb").read())
            check(ok, "%s -o .%s writes that format: %r" % (cmd[0], ext, r.stderr))
        out = os.path.join(d, "%s-forced.csv" % cmd[0])
        run(*cmd, "--format", "jsonl", "-o", out)
        check(open(out).read().startswith("{"), "%s: --format wins over the extension" % cmd[0])


def test_sql_names_and_schema():
    a = run("sql", "--format", "csv", 'SELECT "op category", "Percentage (%)" FROM ops_summary_by_category ORDER BY 1')
    b = run("sql", "--format", "csv", "SELECT op_category, percentage FROM ops_summary_by_category ORDER BY 1")
    check(a.returncode == 0 and csv_rows(a.stdout)[1:] == csv_rows(b.stdout)[1:] and len(csv_rows(b.stdout)) > 2,
          "sheet headers name the columns: %r" % a.stderr)
    k = run("sql", "--format", "csv", 'SELECT sum("Kernel duration (µs)_sum") = sum(kernel_duration_us_sum) FROM kernel_summary')
    check(k.stdout.split() == ['"sum(""Kernel duration (µs)_sum"") = sum(kernel_duration_us_sum)"', "1"] or
          csv_rows(k.stdout)[1] == ["1"], "µs header alias: %r %r" % (k.stdout, k.stderr))
    r = run("sql", 'SELECT "op categry" FROM ops_summary_by_category')
    check(r.returncode == 2 and "no such column" in r.stderr, "an unknown quoted name is an error: %r" % r.stderr)
    s = csv_rows(run("sql", "--schema", "--format", "csv").stdout)
    check(s[0] == ["table", "column", "type", "hidden", "alias_of", "description"], "schema header: %r" % s[0])
    tables = {row[0] for row in s[1:]}
    check({"traces", "kernels", "ops", "events", "gpu_timeline", "kernel_summary", "ops_summary",
           "ops_summary_by_category", "ops_unique_args"} <= tables, "schema lists every table: %r" % tables)
    check(["ops_summary_by_category", "op category", "TEXT", "yes", "op_category"] in [r[:5] for r in s],
          "schema lists the alias")
    check(["traces", "label_bs", "TEXT", "no", ""] in [r[:5] for r in s], "schema lists label columns")
    check(["kernels", "dur", "INTEGER", "no", ""] in [r[:5] for r in s], "schema lists types")
    one = csv_rows(run("sql", "--schema", "kernels", "--format", "csv").stdout)
    check(len(one) > 10 and {r[0] for r in one[1:]} == {"kernels"}, "sql --schema TABLE")
    check(run("sql", "--schema", "nosuch").returncode == 2, "sql --schema of an unknown table exits 2")
    # every schema column is selectable by its name
    for table in sorted(tables):
        cols = ", ".join('"%s"' % r[1].replace('"', '""') for r in s[1:] if r[0] == table)
        r = run("sql", "SELECT %s FROM %s LIMIT 1" % (cols, table))
        check(r.returncode == 0, "every listed column of %s selects: %r" % (table, r.stderr[:300]))


def test_help():
    for cmd, words in (("label", ["KEY=VALUE", "--rm", "Exit status"]), ("ls", ["--labels", "--label KEY", "--units"]),
                       ("query", ["--pivot", "--units", ".xlsx"]), ("sql", ["--units", "--schema", ".csv"])):
        out = run(cmd, "--help").stdout
        check(all(w in out for w in words), "%s --help names %s" % (cmd, words))
    check("label" in subprocess.run([TL, "--help"], capture_output=True, text=True).stdout, "tracelens --help lists label")


def main():
    global TL, DB, TMP
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    TL = os.path.join(build, "tracelens")
    with tempfile.TemporaryDirectory(prefix="tl_cli_queries.") as tmp:
        TMP = tmp
        DB = os.path.join(tmp, "db")
        copy = os.path.join(tmp, "copy.json.gz")
        data = bytearray(open(TRACE, "rb").read())
        data[4:8] = b"\x01\x02\x03\x04"  # gzip mtime: same events, another content hash
        open(copy, "wb").write(data)
        r = run("ingest", "-q", TRACE, copy)
        check(r.returncode == 0, "ingest: %r" % r.stderr)
        ids = sorted(ids_and_labels())
        check(len(ids) == 2, "two traces stored: %r" % ids)
        a, b = ids
        test_label(a, b)
        test_ambiguous(tmp)
        test_pivot(a, b)
        test_units()
        test_piped_and_terminal()
        test_output_by_extension()
        test_sql_names_and_schema()
        test_help()
    return check.summary("cli.queries")


if __name__ == "__main__":
    sys.exit(main())
