#!/usr/bin/env python3
"""Fails if a module of any crate imports, directly or through others, a
module that imports it back. Reads `crate::` paths outside comments; the
crate root (lib.rs / main.rs, which only declares and re-exports) is left out."""

import os
import re
import sys


def modules(src):
    found = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)[:-3]
            name = rel.replace("/mod", "").replace("/", "::")
            if name in ("lib", "main"):
                continue
            with open(path, encoding="utf-8") as fh:
                found[name] = "\n".join(l for l in fh.read().split("\n") if not l.strip().startswith("//"))
    return found


def graph(mods):
    edges = {m: set() for m in mods}
    for m, text in mods.items():
        for path in re.findall(r"crate::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)", text):
            parts = path.split("::")
            for k in range(len(parts), 0, -1):
                target = "::".join(parts[:k])
                if target in mods:
                    # A module's own submodules are part of it, and a submodule may use its parent.
                    if target != m and not target.startswith(m + "::") and not m.startswith(target + "::"):
                        edges[m].add(target)
                    break
    return edges


def cycles(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
    bad = 0
    for crate in sorted(os.listdir(root)):
        src = os.path.join(root, crate, "src")
        if not os.path.isdir(src):
            continue
        for comp in cycles(graph(modules(src))):
            bad += 1
            print(f"{crate}: import circle among {', '.join(comp)}")
    if bad:
        sys.exit(1)
    print("no import circle in any crate")


if __name__ == "__main__":
    main()
