#!/usr/bin/env python3
"""The native .pftrace reader against its traceEvents JSON twin, at a small
size. bench/pftrace_gen.py writes an 8 MiB synthetic rocprofv3 .pftrace and
its traceEvents JSON (the same events); then
  - both files store the same events, column for column;
  - both give byte-identical pftrace_hip_api, pftrace_hip_activity and
    pftrace_memory_copy reports.
The ingest's peak RSS is printed, not judged: at 8 MiB the process's fixed
memory dominates and varies by a few MiB from run to run. The issue's bar
(0.5 x the file + 16 MiB) is about scale: bench/pftrace measures it at any
size (1G for the issue's figures, with the speed ratio; docs/CONFORMANCE.md).
usage: test_pftrace_bench.py BUILD_DIR"""
import filecmp
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SIZE = 8 << 20
COLS = ("uid,ts,dur,name,cat,kind,pid,tid,correlation,external_id,stream,device,grid,block,args,"
        "parent,parent_py,launcher,linked")
REPORTS = ("TraceLens_generate_perf_report_pftrace_hip_api", "TraceLens_generate_perf_report_pftrace_hip_activity",
           "TraceLens_generate_perf_report_pftrace_memory_copy")


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def main():
    build = os.path.abspath(sys.argv[1])
    tl = os.path.join(build, "tracelens")
    passed, failed = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        pf, js = os.path.join(tmp, "t.pftrace"), os.path.join(tmp, "t.json")
        p = run([sys.executable, os.path.join(ROOT, "bench", "pftrace_gen.py"), str(SIZE), pf, js])
        if p.returncode:
            print(p.stderr.decode(errors="replace"))
            return 1
        size = os.path.getsize(pf)
        m = run([sys.executable, os.path.join(ROOT, "bench", "measure.py"), tl, "--db", os.path.join(tmp, "rss"),
                 "ingest", "-q", pf])
        kib = int(m.stdout.split()[1]) if m.returncode == 0 else 0
        bar = 0.5 * size + 16 * 2**20
        print("pftrace %d bytes: ingest peak RSS %.1f MiB (the issue's bar: %.1f MiB; not judged here)"
              % (size, kib / 1024, bar / 2**20))
        if m.returncode or kib <= 0:
            failed.append("ingest")

        db = os.path.join(tmp, "db")
        rows = {}
        for form, path in (("json", js), ("pftrace", pf)):
            p = run([tl, "--db", db, "ingest", path])
            tid = p.stdout.split()[0].decode() if p.returncode == 0 and p.stdout.split() else ""
            q = run([tl, "--db", db, "sql", f"SELECT {COLS} FROM events WHERE trace_id = '{tid}' ORDER BY uid",
                     "--format", "csv"])
            rows[form] = q.stdout if tid and q.returncode == 0 else None
        if rows["json"] and rows["json"] == rows["pftrace"]:
            passed += 1
        else:
            failed.append("stored events")

        for cmd in REPORTS:
            outs = {}
            for form, path in (("json", js), ("pftrace", pf)):
                outs[form] = os.path.join(tmp, cmd, form)
                p = run([os.path.join(build, cmd), "--db", db, "--trace_path", path, "--output_csvs_dir", outs[form]])
                if p.returncode:
                    outs[form] = None
            names = sorted(os.listdir(outs["json"])) if outs["json"] else []
            same = (outs["pftrace"] is not None and names and names == sorted(os.listdir(outs["pftrace"])) and
                    all(filecmp.cmp(os.path.join(outs["json"], n), os.path.join(outs["pftrace"], n), shallow=False)
                        for n in names))
            if same:
                passed += 1
            else:
                failed.append(cmd)
    for f in failed:
        print("FAIL", f)
    print("%d passed, %d failed" % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
