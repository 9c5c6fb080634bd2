#!/usr/bin/env python3
"""golden_collective_epoch.py — the collective report on epoch-scale rank
traces against the reference's CSVs, byte for byte.

tests/golden/collective_epoch/make.py writes four corpora from tracegen's
(integer ts and dur at ~1.7e15 µs on 4 and 2 ranks, integer ts with float
dur on one rank, and nanosecond-resolution 3-decimal ts), and holds the
reference's multi-rank collective report on each (reference_collective/).
Here the corpora are written again with the same code, reported with
TraceLens_generate_multi_rank_collective_report_pytorch, and every reference
CSV must equal ours byte for byte: the values (skews and waits of doubles at
0.25 µs steps) and which columns print as integers (the reference keeps
JSON-integer times as int64 and everything it derives by subtraction, min,
max and sums). With mpirun and an MPI build, the epoch_int corpus is also
reported by `tracelens collective --mpi` over 2 processes, which must give
the same files.

usage: golden_collective_epoch.py BUILD_DIR   (prints "N passed, M failed"
last; exit 0 when nothing failed)
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden", "collective_epoch")
sys.path.insert(0, GOLDEN)
import make  # noqa: E402  (the corpus rewrite lives beside the reference CSVs)

PASS = FAIL = 0


def check(cond, what):
    global PASS, FAIL
    if cond:
        PASS += 1
    else:
        FAIL += 1
        print("FAIL:", what)


def same_files(case, ref, out):
    """Every reference CSV against out/, byte for byte; prints the first
    differing line of a file that differs."""
    for f in sorted(os.listdir(ref)):
        want = open(os.path.join(ref, f), "rb").read()
        path = os.path.join(out, f)
        got = open(path, "rb").read() if os.path.exists(path) else None
        if got is not None and got != want:
            gl, wl = got.decode().splitlines(), want.decode().splitlines()
            i = next((k for k, (a, b) in enumerate(zip(gl, wl)) if a != b), min(len(gl), len(wl)))
            print("  %s %s line %d:\n    ours: %s\n    ref:  %s" % (case, f, i + 1, (gl + [""])[i][:300],
                                                                (wl + [""])[i][:300]))
        check(got == want, "%s: %s equals the reference's" % (case, f))


def mpi_command(build):
    """mpirun's argument list when MPI is usable here, else None."""
    mpirun = shutil.which("mpirun")
    tl = os.path.join(build, "tracelens")
    if not mpirun or not os.path.exists(tl):
        return None
    v = subprocess.run([tl, "--version"], capture_output=True, text=True).stdout
    if "MPI: lib" not in v:
        return None
    cmd = [mpirun, "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    exe = os.path.join(build, "TraceLens_generate_multi_rank_collective_report_pytorch")
    tmp = tempfile.mkdtemp(prefix="tl_golden_epoch_")
    try:
        for case, (ranks, _) in make.CASES.items():
            corpus = os.path.join(tmp, case)
            make.write_corpus(build, case, corpus)
            out = os.path.join(tmp, case + "_csv")
            p = subprocess.run([exe, "--db", os.path.join(tmp, "db"), "--trace_pattern",
                                os.path.join(corpus, "rank_*.json"), "--world_size", str(ranks),
                                "--output_csvs_dir", out, "-q"], capture_output=True, text=True)
            check(p.returncode == 0, "collective report %s (%s)" % (case, p.stderr.strip()[-300:]))
            same_files(case, os.path.join(GOLDEN, case, "reference_collective"), out)
        mpi = mpi_command(build)
        if mpi:
            out = os.path.join(tmp, "epoch_int_mpi")
            # sanitizer builds: Open MPI's start-up allocations are its own
            # (tests/mpi.supp, as test_mpi.sh); its plugins stay loaded so
            # that the leak report can name them
            lsan = "suppressions=%s:print_suppressions=0:fast_unwind_on_malloc=0" % os.path.join(HERE, "mpi.supp")
            if os.environ.get("LSAN_OPTIONS"):
                lsan += ":" + os.environ["LSAN_OPTIONS"]
            env = dict(os.environ, OMPI_MCA_mca_base_component_disable_dlclose="1", LSAN_OPTIONS=lsan)
            p = subprocess.run(mpi + ["-x", "OMPI_MCA_mca_base_component_disable_dlclose", "-x", "LSAN_OPTIONS",
                                      "-n", "2", os.path.join(build, "tracelens"), "collective", "-q", "--mpi",
                                      "--db", os.path.join(tmp, "mpi", "tl-%r"), "--trace_pattern",
                                      os.path.join(tmp, "epoch_int", "rank_*.json"), "--world_size", "4",
                                      "--output_csvs_dir", out], capture_output=True, text=True, env=env,
                               timeout=300)
            check(p.returncode == 0, "collective --mpi epoch_int (%s)" % p.stderr.strip()[-300:])
            same_files("epoch_int --mpi", os.path.join(GOLDEN, "epoch_int", "reference_collective"), out)
        else:
            print("collective --mpi: skipped (no mpirun or no MPI build)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
