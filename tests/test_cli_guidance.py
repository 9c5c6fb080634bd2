#!/usr/bin/env python3
"""test_cli_guidance.py — the CLI guides a user who slips: a mistyped
command or flag gets the nearest one, a missing file is called a missing
file, an empty folder is an error, read commands never create a store,
every exit code is documented, folder-ingest progress on a terminal
never runs into the result lines, the report summary fits the terminal,
the compat commands take the reference's flag abbreviations, the
rocprof report explains its units once on a terminal, and a bad
environment value is warned about once.

usage: test_cli_guidance.py BUILD_DIR
"""
import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios

from tlcheck import Checks

check = Checks()


def run(tl, *args, cwd=None):
    return subprocess.run([tl, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def under_pty(argv, cols=0):
    """Runs argv with stdout and stderr on one pseudo-terminal (as a user's
    shell would; cols columns wide when given) and returns everything it
    wrote. The test keeps the terminal's other end open until the program
    has exited and its output is drained, so no late line is lost."""
    master, slave = os.openpty()
    if cols:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            out += os.read(master, 65536)
        elif proc.poll() is not None:
            break
    os.close(slave)
    os.close(master)
    return out.decode("utf-8", "replace")

def main():
    build = os.path.abspath(sys.argv[1])
    tl = os.path.join(build, "tracelens")
    with tempfile.TemporaryDirectory(prefix="tl_guide_") as tmp:
        db = os.path.join(tmp, "db")
        traces = os.path.join(tmp, "runs")
        os.makedirs(traces)
        for k in range(3):
            subprocess.run([os.path.join(build, "tracegen"), "--size", "100K", "--seed", str(k + 1), "-q",
                            "-o", os.path.join(traces, f"rank_{k}.json")], check=True)

        r = run(tl, "--db", db, "repot", "x")
        check(r.returncode == 2 and "did you mean report?" in r.stderr, f"mistyped command: {r.stderr!r}")
        for cmd, flag, want in [("ingest", "--jbos", "--jobs"), ("sql", "--formt", "--format"),
                                ("query", "--tabel", "--table")]:
            r = run(tl, "--db", db, cmd, flag, "1", "x")
            check(r.returncode == 2 and f"did you mean {want}?" in r.stderr,
                  f"{cmd} {flag}: rc {r.returncode} {r.stderr[:200]!r}")
        r = run(os.path.join(build, "TraceLens_generate_perf_report_pytorch"), "--short_kernel_studdy")
        check(r.returncode == 2 and "did you mean --short_kernel_study?" in r.stderr,
              f"reference command flag: {r.stderr[:200]!r}")

        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        r = run(tl, "--db", db, "ingest", empty)
        check(r.returncode == 1 and "no trace files found" in r.stderr, f"empty folder: {r.returncode} {r.stderr!r}")
        check(not os.path.exists(db), "an empty ingest created the store")

        typo = os.path.join(tmp, "dbtypo")
        for cmd in (["ls"], ["info", "abcd"], ["report", "abcd"], ["sql", "SELECT 1"], ["check"]):
            r = run(tl, "--db", typo, *cmd)
            check(r.returncode == 3 and not os.path.exists(typo), f"{cmd[0]} on a missing store: rc {r.returncode}")

        r = run(tl, "--db", db, "ingest", "-q", traces)
        check(r.returncode == 0 and len(r.stdout.splitlines()) == 3, f"ingest: {r.returncode} {r.stderr!r}")
        r = run(tl, "--db", db, "report", "--enable-kernel-sumary", os.path.join(traces, "rank_0.json"))
        check(r.returncode == 2 and "did you mean --enable_kernel_summary?" in r.stderr, f"report flag: {r.stderr!r}")
        r = run(tl, "--db", db, "report", os.path.join(tmp, "missing.json"))
        check(r.returncode == 4 and "missing.json: no such file" in r.stderr, f"missing file: {r.stderr!r}")

        # one behaviour for report: a summary naming the trace, no files
        roc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "rocprof_908_slice",
                           "rocprof_908_slice.json.gz")
        r = run(tl, "--db", db, "ingest", "-q", roc)
        rid = r.stdout.split("\t")[0]
        cwd = os.path.join(tmp, "cwd")
        os.makedirs(cwd)
        r = run(tl, "--db", db, "report", rid, cwd=cwd)
        check(r.returncode == 0 and f"rocprofv3 report of trace {rid}" in r.stdout and "gpu_timeline" in r.stdout,
              f"rocprof report summary: {r.returncode} {r.stdout[:200]!r} {r.stderr[-200:]!r}")
        check(os.listdir(cwd) == [], f"report of a rocprof id wrote files: {os.listdir(cwd)}")
        pid = subprocess.run([tl, "--db", db, "ingest", "-q", os.path.join(traces, "rank_0.json")],
                             capture_output=True, text=True).stdout.split("\t")[0]
        r = run(tl, "--db", db, "report", pid, cwd=cwd)
        check(r.stdout.startswith(f"PyTorch report of trace {pid}"), f"PyTorch summary head: {r.stdout[:120]!r}")
        for cols in (60, 100):
            shown = under_pty([tl, "--db", db, "report", pid], cols).replace("\r\n", "\n").split("\n")
            wide = [ln for ln in shown if len(ln) > cols and not ln.startswith("tracelens: ")]
            check(len(shown) > 20 and not wide, f"summary wider than a {cols}-column terminal: {wide[:2]!r}")
        # the compat commands take the unique-prefix abbreviations the reference's argparse takes
        r = subprocess.run([os.path.join(build, "TraceLens_generate_perf_report_pytorch"), "--profile_json",
                            os.path.join(traces, "rank_1.json"), "--output_csvs", os.path.join(tmp, "abbr")],
                           capture_output=True, text=True, env=dict(os.environ, TRACELENS_DB=db))
        check(r.returncode == 0 and os.path.exists(os.path.join(tmp, "abbr", "ops_summary.csv")),
              f"PyTorch compat abbreviations: {r.returncode} {r.stderr[-200:]!r}")
        r = run(os.path.join(build, "TraceLens_generate_perf_report_jax"), "--profile_p",
                os.path.join(tmp, "none.xplane.pb"), "--output_csvs", os.path.join(tmp, "abbr2"))
        check(r.returncode == 4 and "no such file" in r.stderr, f"JAX compat abbreviations: {r.stderr[-200:]!r}")
        h = run(os.path.join(build, "TraceLens_generate_multi_rank_collective_report_pytorch"), "--help").stdout
        check("4 a trace id" in h and "exit status" in h, "collective --help does not document exit code 4")
        # a rocprofv3 Perfetto trace, native and as its traceEvents JSON: the pftrace report
        pfdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "pftrace")
        sys.path.insert(0, pfdir)
        import pftrace_encode
        pf_json = os.path.join(pfdir, "inputs", "fixture_rich.json")
        pf_native = os.path.join(tmp, "fixture_rich.pftrace")
        with open(pf_json, encoding="utf-8") as f, open(pf_native, "wb") as g:
            g.write(pftrace_encode.encode(json.load(f)))
        for form, path in (("JSON", pf_json), ("native", pf_native)):
            r = run(tl, "--db", db, "report", path, cwd=cwd)
            check(r.returncode == 0 and "pftrace HIP activity report of trace" in r.stdout
                  and "kernel_summary" in r.stdout and os.listdir(cwd) == [],
                  f"report of a {form} pftrace: {r.returncode} {r.stdout[:120]!r} {r.stderr[-200:]!r}")
            page = os.path.join(tmp, f"pf_{form}.html")
            r = run(tl, "--db", db, "report", path, "--html", page, cwd=cwd)
            check(r.returncode == 0 and os.path.exists(page) and os.listdir(cwd) == [],
                  f"report --html of a {form} pftrace: {r.returncode} {r.stderr[-200:]!r}")
        out_x = os.path.join(tmp, "compat.xlsx")
        r = subprocess.run([os.path.join(build, "TraceLens_generate_perf_report_pytorch"), "--profile_json_path",
                            os.path.join(traces, "rank_0.json"), "--output_xlsx_path", out_x],
                           capture_output=True, text=True, env=dict(os.environ, TRACELENS_DB=db))
        check(f"DataFrames successfully written to {out_x}" in r.stdout, f"compat says what it wrote: {r.stdout!r}")

        # query: -o picks the format from the extension; piped text is not cut
        qcsv = os.path.join(tmp, "q.csv")
        r = run(tl, "--db", db, "query", "--by", "name", "--agg", "count", "-q", "-o", qcsv)
        head = open(qcsv).readline() if os.path.exists(qcsv) else ""
        check(r.returncode == 0 and head.strip() == "name,count", f"query -o x.csv wrote {head!r}")
        r = run(tl, "--db", db, "query", "--by", "name", "--agg", "count", "--all", "-q")
        names = [ln.split("  ")[0] for ln in r.stdout.splitlines()[2:]]
        check(any(len(n) > 120 for n in names) and not any(n.endswith("…") for n in names),
              "query output cut when piped")

        # a bad environment value is warned about once, also by a command
        # that re-executes itself for huge pages (corpus-report)
        r = subprocess.run([tl, "--db", db, "corpus-report", "-q", "-b", tmp, "-f", "rank_", "-o",
                            os.path.join(tmp, "corpus.xlsx")], capture_output=True, text=True,
                           env=dict(os.environ, TRACELENS_MAX_RATIO="lots"))
        said = r.stderr.count("TRACELENS_MAX_RATIO=lots is not a number")
        check(said == 1, f"the environment warning said {said} times: {r.stderr[-300:]!r}")

        h = run(tl, "--help").stdout
        for code in ("0 success", "1 an input", "2 bad command line", "3 no store", "4 trace not found",
                     "5 nothing to do", "130 interrupted"):
            check(code in h, f"--help does not document exit code '{code}'")

        db2 = os.path.join(tmp, "db2")
        out = under_pty([tl, "--db", db2, "ingest", "-j", "1", traces])
        lines = [re.sub(r"\x1b\[K", "", ln).split("\r")[-1] for ln in out.replace("\r\n", "\n").split("\n")]
        results = [ln for ln in lines if re.match(r"^[0-9a-f]{16}\t", ln)]
        check(len(results) == 3, f"progress glued to result lines on a terminal: {out!r}")

        # the rocprof units note: on a terminal, once per user
        roc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "rocprof_908_slice",
                           "rocprof_908_slice.json.gz")
        os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "state")
        rp = os.path.join(build, "TraceLens_generate_perf_report_rocprof")
        argv = [rp, "--profile_json_path", roc, "--output_csvs_dir", os.path.join(tmp, "roc")]
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db3")
        r = run(rp, "--profile_json_path", roc, "--output_csvs_dir", os.path.join(tmp, "roc2"))
        check("reproduces them" not in r.stderr, "the units note when stderr is not a terminal")
        first, second = under_pty(argv), under_pty(argv)
        check("--reference-units reproduces them" in first, f"no rocprof units note on a terminal: {first[-400:]!r}")
        check("--reference-units reproduces them" not in second, "the rocprof units note shows twice")
    return check.summary()


if __name__ == "__main__":
    sys.exit(main())
