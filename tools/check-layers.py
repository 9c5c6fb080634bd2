#!/usr/bin/env python3
"""check-layers.py — the include rules of docs/ARCHITECTURE.md, checked.

1. Layers: a file may include headers of its own folder and of folders in a
   lower layer only (tools -> report families -> core -> store -> base).
   Folders of one layer do not include each other.
2. No include loop: the graph of headers including headers has no cycle.
3. No loop between source files (given a build folder): where a.c calls or
   reads what b.c defines, a depends on b; these dependencies, read from the
   object files with nm, have no cycle. Files that call each other through a
   shared internal header are a loop too.

Usage: check-layers.py [BUILD_DIR]. Prints each violation and exits 1 when
there is one; run from anywhere.
"""
import collections
import glob
import subprocess
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Lower number = lower layer. A folder not listed is not checked (tests, examples).
LAYERS = {
    "base": 0,
    "store": 1,
    "ingest": 2,
    "query/core": 3,
    "query/perfmodel": 4,
    "report": 4,
    "query/pytorch": 5,
    "query/diff": 5,
    "query/rocprof": 5,
    "query/jax": 5,
    "query/pftrace": 5,
    "query/inference": 6,
    "query/multirank": 6,
    "query/adhoc": 6,
    "tools": 7,
}

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(path):
    best = None
    for f in LAYERS:
        if path.startswith(f + "/") and (best is None or len(f) > len(best)):
            best = f
    return best


def sources():
    for d in LAYERS:
        base = os.path.join(ROOT, d)
        for dirpath, _, names in os.walk(base):
            for n in names:
                if n.endswith((".c", ".h")):
                    p = os.path.relpath(os.path.join(dirpath, n), ROOT)
                    if folder_of(p) == d:
                        yield p


def resolve(src, inc):
    for cand in (os.path.normpath(os.path.join(os.path.dirname(src), inc)), os.path.normpath(inc)):
        if os.path.exists(os.path.join(ROOT, cand)):
            return cand
    return None  # generated (protobuf-c) or system header


def main():
    errors = []
    edges = {}
    for src in sorted(set(sources())):
        text = open(os.path.join(ROOT, src), encoding="utf-8").read()
        if src.endswith(".h"):
            edges.setdefault(src, set())
        for inc in INC.findall(text):
            tgt = resolve(src, inc)
            if tgt is None:
                continue
            fs, ft = folder_of(src), folder_of(tgt)
            if ft is None:
                errors.append(f"{src}: includes {tgt}, outside every layer")
                continue
            if fs != ft and LAYERS[ft] >= LAYERS[fs]:
                errors.append(f"{src}: includes {tgt} ({ft}, layer {LAYERS[ft]}) from layer {LAYERS[fs]} ({fs})")
            if src.endswith(".h"):
                edges[src].add(tgt)
    for c in cycles(edges):
        errors.append("include loop: " + " <-> ".join(c))
    nsym = 0
    if len(sys.argv) > 1:
        sym = symbol_graph(sys.argv[1])
        nsym = sum(len(v) for v in sym.values())
        for c in cycles(sym):
            errors.append("call loop: " + " <-> ".join(c))
    for e in errors:
        print(e)
    n = sum(len(v) for v in edges.values())
    print(f"check-layers: {len(edges)} headers, {n} header includes, {nsym} file dependencies, {len(errors)} violations")
    return 1 if errors else 0


def symbol_graph(build):
    """source file -> source files defining the symbols it uses."""
    defs, undef = {}, collections.defaultdict(set)
    objs = glob.glob(os.path.join(build, "CMakeFiles", "tl_*.dir", "**", "*.o"), recursive=True)
    if not objs:
        sys.exit(f"check-layers: no object files under {build}/CMakeFiles/tl_*.dir")
    for o in objs:
        src = o.split(".dir" + os.sep, 1)[1][:-2]
        for line in subprocess.check_output(["nm", o], text=True).splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBRCV":
                defs[f[2]] = src
            elif len(f) == 2 and f[0] == "U":
                undef[src].add(f[1])
    g = collections.defaultdict(set)
    for src, names in undef.items():
        for n in names:
            if n in defs and defs[n] != src:
                g[src].add(defs[n])
    return g


def cycles(edges):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return comps


if __name__ == "__main__":
    sys.exit(main())
