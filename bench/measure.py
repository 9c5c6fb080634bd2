#!/usr/bin/env python3
"""Runs a command and prints '<wall seconds> <peak RSS KiB>' of it (the
child's maximum resident set size from getrusage). Output of the command
goes to /dev/null. Used by the bench/ scripts."""
import resource, subprocess, sys, time

t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("%.4f %d" % (wall, rss))
sys.exit(rc)
