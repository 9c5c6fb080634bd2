#!/usr/bin/env python3
"""make.py — the epoch-scale collective golden set.

Kineto traces with Unix-epoch timestamps (~1.7e15 µs) come in two forms:
old Kineto writes ts (and often dur) as JSON integers, newer Kineto writes
nanosecond resolution as 3-decimal µs floats. At that magnitude a double's
step is 0.25 µs, so the skews and waits made from them depend on the exact
text, and the reference prints what it reads as integers as integers. No
public multi-rank trace of either form has collective metadata, so this set
makes them from tracegen corpora (4 ranks: world group and TP-pair
sub-groups; 2 ranks: the world group only):

  epoch_int    4 ranks; every ts and dur rewritten as a JSON integer:
               ts = 1682725898000000 + round(ts), dur = max(1, round(dur))
               (old Kineto, as HTA's trace_filter and
               negative_queue_length traces)
  epoch_int2   2 ranks, the same rewrite: no rank misses a collective, so
               the per-rank columns stay integers
  epoch_mixed  2 ranks, the same rewrite, but rank 1 writes every dur as
               "N.0" (integer ts, float dur, as trace_filter's rank 0)
  epoch_ns     4 ranks; every ts shifted to 1712195495000000 + (ts -
               2235146660000) with its 3 decimals kept as text, dur unchanged
               (as HTA's ns_resolution_trace)

The text is rewritten, not re-serialised, so the decimals reach the readers
exactly as written. <case>/reference_collective/ holds the reference's
multi-rank collective report CSVs (TraceLens main 171dd747,
generate_multi_rank_collective_report_pytorch --world_size N);
tests/golden_collective_epoch.py writes the corpus again with rewrite() and
compares our CSVs with them byte for byte.

usage: make.py TRACELENS_CHECKOUT [BUILD_DIR]
"""
import decimal
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# case -> (ranks, text rewrite)
CASES = {"epoch_int": (4, "int"), "epoch_int2": (2, "int"), "epoch_mixed": (2, "int"), "epoch_ns": (4, "ns")}
TIME = re.compile(r'"(ts|dur)": (-?[0-9]+(?:\.[0-9]+)?)')


def rewrite_text(text, case, rank):
    """The trace text of one rank with every ts/dur rewritten for case."""
    mode = CASES[case][1]

    def sub(m):
        key, num = m.group(1), decimal.Decimal(m.group(2))
        if mode == "int":
            v = int(num.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
            v = 1682725898000000 + v if key == "ts" else max(1, v)
            if key == "dur" and case == "epoch_mixed" and rank == 1:
                v = "%d.0" % v
        else:
            v = num + 1712195495000000 - 2235146660000 if key == "ts" else num
        return '"%s": %s' % (key, v)
    return TIME.sub(sub, text)


def write_corpus(build, case, out):
    """tracegen's corpus rewritten for case into folder out (rank_*.json)."""
    raw = out + ".raw"
    ranks = CASES[case][0]
    subprocess.run([os.path.join(build, "tracegen"), "--ranks", str(ranks), "--size", "256K", "--seed", "2",
                    "-q", "-o", raw], check=True)
    os.makedirs(out, exist_ok=True)
    for r in range(ranks):
        with open(os.path.join(raw, "rank_%d.json" % r)) as f:
            text = f.read()
        with open(os.path.join(out, "rank_%d.json" % r), "w") as f:
            f.write(rewrite_text(text, case, r))
    shutil.rmtree(raw)


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    checkout = os.path.abspath(sys.argv[1])
    build = sys.argv[2] if len(sys.argv) == 3 else os.path.join(HERE, "..", "..", "..", "build")
    env = dict(os.environ, PYTHONPATH=checkout)
    for case in CASES:
        d = os.path.join(HERE, case)
        out = os.path.join(d, "reference_collective")
        if os.path.isdir(out):
            shutil.rmtree(out)
        corpus = os.path.join(d, "corpus.tmp")
        write_corpus(build, case, corpus)
        cmd = ["/usr/bin/python3", "-m", "TraceLens.Reporting.generate_multi_rank_collective_report_pytorch",
               "--trace_pattern", os.path.join(corpus, "rank_*.json"), "--world_size", str(CASES[case][0]),
               "--output_csvs_dir", out]
        print("+", case, " ".join(cmd[2:]), flush=True)
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        shutil.rmtree(corpus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
