#!/usr/bin/env python3
"""Runs a command and prints '<wall seconds> <peak RSS KiB>' of it (the
child's maximum resident set size from getrusage). Output of the command
goes to /dev/null. Used by the bench/ scripts.

With MEASURE_MM=1 three more fields follow: the command's minor page
faults, its voluntary context switches, and the TLB shootdown interrupts
the whole machine took meanwhile (/proc/interrupts, x86; -1 elsewhere).
A multi-threaded process changing its address space (mmap, munmap,
mprotect, madvise) stalls its other threads' page faults and interrupts
the cores they run on; these count it."""
import os, resource, subprocess, sys, time


def tlb_shootdowns():
    try:
        with open("/proc/interrupts") as f:
            for line in f:
                if "TLB shootdowns" in line:
                    return sum(int(x) for x in line.split()[1:] if x.isdigit())
    except OSError:
        pass
    return -1


mm = os.environ.get("MEASURE_MM") == "1"
tlb0 = tlb_shootdowns() if mm else -1
t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
if mm:
    tlb1 = tlb_shootdowns()
    print("%.4f %d %d %d %d" % (wall, ru.ru_maxrss, ru.ru_minflt, ru.ru_nvcsw,
                                tlb1 - tlb0 if tlb0 >= 0 and tlb1 >= 0 else -1))
else:
    print("%.4f %d" % (wall, ru.ru_maxrss))
sys.exit(rc)
