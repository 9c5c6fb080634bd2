"""rewrite.py — the string-typed args variants of the in-repo golden traces
(tests/golden_string_args.py, make.py beside this file).

rewrite(doc, mode, keys) changes, in every event's args, each integer value
of a key in keys to: its decimal text ("dec", "847517"), its 0x hex text
("hex", "0xcee9d"), or a JSON float ("float", 847517.0). ROCm 6.2 writes
"stream": "0x0" this way on runtime events.

tolerated(): every integer-valued args key of the traces except a string
`correlation` and `stream` on GPU events. Rewriting those, the reference's
CSVs are byte-identical to its CSVs on the original trace (make.py checks
that), so the case's reference_csvs/ are the expected output. The two left
out change the reference's output: a string `correlation` no longer
matches the integer flow ids, so its kernels lose their ops (a float one
still does: 12.0 == 12 in Python); a string or float `stream` on a kernel
is printed as written ('7', 7.0) in kernel_details. tracelens reads both as
the integers they spell.
"""
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}
MODES = ("dec", "hex", "float")


def tolerated(event, key, mode):
    if key == "correlation":
        return mode == "float"
    return not (key == "stream" and event.get("cat") in GPU_CATS)


def every_key(event, key, mode):
    return True


def rewrite(doc, mode, keys=tolerated):
    """doc (a parsed trace) with its integer args rewritten in place;
    keys(event, key, mode) says which."""
    for e in doc["traceEvents"]:
        a = e.get("args")
        if not isinstance(a, dict):
            continue
        for k, v in list(a.items()):
            if isinstance(v, bool) or not isinstance(v, int) or not keys(e, k, mode):
                continue
            a[k] = str(v) if mode == "dec" else hex(v) if mode == "hex" else float(v)
    return doc
