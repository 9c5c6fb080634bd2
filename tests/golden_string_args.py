#!/usr/bin/env python3
"""golden_string_args.py — string- and float-typed args keys (conformance
item 2: ROCm 6.2 writes "stream": "0x0").

For each in-repo PyTorch golden case (b200_eager_window, hta_mi250_minitoy,
hta_negq_step551) and each mode of tests/golden/string_args/rewrite.py
(decimal strings, 0x hex strings, JSON floats), every integer-valued args
key the reference tolerates so (all of them but a string `correlation` and
`stream` on GPU events) is rewritten; the reference's CSVs on such a trace are
byte-identical to its CSVs on the original (tests/golden/string_args/make.py
checks that against the reference), so ours must match the case's
reference_csvs by the reference's rules (golden_pytorch.compare_sheet).

Then every integer args key is rewritten, `correlation` and GPU `stream`
included. There the reference drops the links (a string correlation matches
no integer flow id) and prints kernel streams as written ('7', 7.0);
tracelens reads the integers these values spell, so its report must still
equal the original's.

usage: golden_string_args.py BUILD_DIR [-v]   (prints a line per trace and
"N passed, M failed"; exit 0 when nothing failed)
"""
import gzip
import json
import os
import sys
import tempfile

import golden_pytorch

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
sys.path.insert(0, os.path.join(GOLDEN, "string_args"))
import make  # noqa: E402
import rewrite  # noqa: E402


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv[1:]
    if len(args) != 1:
        print(__doc__)
        return 2
    build = os.path.abspath(args[0])
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="tl_string_args_") as tmp:
        os.environ["TRACELENS_DB"] = os.path.join(tmp, "db")
        for case in make.CASES:
            for mode in rewrite.MODES:
                for scope, keys in (("tolerated", rewrite.tolerated), ("every key", rewrite.every_key)):
                    with gzip.open(os.path.join(GOLDEN, case, case + ".json.gz")) as f:
                        doc = rewrite.rewrite(json.load(f), mode, keys)
                    name = f"{case}.{mode}.{'all' if scope == 'every key' else 'tol'}"
                    trace = os.path.join(tmp, name + ".json")
                    with open(trace, "w") as f:
                        json.dump(doc, f)
                    out = os.path.join(tmp, name)
                    os.makedirs(out)
                    cells, bad, problems, pend, _ = golden_pytorch.run_folder(
                        build, os.path.join(GOLDEN, case, "reference_csvs"), trace, make.FLAGS, out, verbose)
                    ok = bad == 0 and not pend
                    passed += ok
                    failed += not ok
                    print(f"{'ok' if ok else 'FAIL':5} {case} {mode} ({scope}): {cells} cells, {bad} mismatches")
                    if not ok or verbose:
                        for p in problems[:8] + (["pending: " + ", ".join(pend)] if pend else []):
                            print("      " + p)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
