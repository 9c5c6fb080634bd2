"""tlcheck.py — the pass/fail counter the script tests share.

    from tlcheck import Checks
    check = Checks()
    check(cond, "what went wrong")      # counts, prints FAIL: ... when false
    sys.exit(check.summary())           # "N passed, M failed"; 1 if any failed
"""
import sys


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def __call__(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what, file=sys.stderr)
        return bool(cond)

    def summary(self, label=""):
        print("%s%d passed, %d failed" % (label + ": " if label else "", self.passed, self.failed))
        return 1 if self.failed else 0
