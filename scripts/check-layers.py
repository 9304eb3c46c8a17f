#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Check that the #include "..." lines of src/, tools/ and include/ respect
the layers of doc/ARCHITECTURE.md: a file may include only headers of its own
layer or of a lower one, and no chain of includes may come back to where it
started.

Layers, lowest first, chosen by directory so that new files are covered:

    public   include/          the installed headers; usable by every layer
    util     src/util/         error detail, strings, sorting
    events   src/events/       generated event tables (data)
    sys      src/sys/          bindings to the frameworks and libSystem
    backend  src/backend/      the backend contract and the backends
    core     src/core/         the public API over the backends
    common   src/common/       UTF-8, untrusted text, files that untrusted
                               data names, JSON, statistics, the clock:
                               compiled into libdkbench and the tools, not
                               libdkperf, so it includes nothing of ours but
                               itself
    bench    src/bench/        libdkbench, on the public API and common
    tools    tools/            the dkperf command-line tool

In src/ every quoted include names its path from src/ ("core/core.h") or
from include/ ("dkperf/kperf.h"); tools/ may also include its own files by a
path relative to the including file, and tools/common/ (spawn, the
record file, symbol readers) by name.

usage: check-layers.py [--root DIR] [--self-test]
Exit status 0 when every edge goes down or sideways and there is no cycle;
1 with one line per offending include otherwise.
"""
import argparse
import os
import re
import sys
import tempfile

LAYERS = [  # (name, directory relative to the root), lowest first
    ("public", "include"),
    ("util", "src/util"),
    ("events", "src/events"),
    ("sys", "src/sys"),
    ("backend", "src/backend"),
    ("core", "src/core"),
    ("common", "src/common"),
    ("bench", "src/bench"),
    ("tools", "tools"),
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
# Layers that may include less than everything below them: libdkbench is
# built on the public API alone, as any user of libdkperf would be, and on
# the common layer, which is compiled into it; the common layer is in no
# library of the layers below it, so it may include none of them. libdkperf's
# layers rank below common: an include of it from them goes up.
ONLY = {"common": ("public", "common"), "bench": ("public", "common", "bench")}


def may_include(me):
    return ONLY.get(me, tuple(n for n, _ in LAYERS[:RANK[me] + 1]))
SOURCE_EXT = (".c", ".h")
# Quoted includes, and bracketed ones too: src/ is on the library's include
# path, so <core/core.h> would reach a layer as surely as "core/core.h".
# A bracketed name that resolves to no file of ours is a system header.
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)')


def layer_of(rel):
    """The layer of a path relative to the root, or None."""
    for name, directory in LAYERS:
        if rel == directory or rel.startswith(directory + "/"):
            return name
    return None


def sources(root):
    for top in ("src", "tools", "include"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")


def resolve(root, rel, target):
    """Where the quoted include target of file rel is found, or None."""
    bases = []
    if rel.startswith("tools/"):
        bases.append(os.path.dirname(rel))
        bases.append("tools/common")  # spawn, dkrec, macho: shared by the tools
    if rel.startswith("src/") or rel.startswith("tools/"):
        bases.append("src")
    bases.append("include")
    for base in bases:
        cand = os.path.normpath(os.path.join(base, target)).replace(os.sep, "/")
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def check(root):
    problems = []
    edges = {}
    for rel in sources(root):
        me = layer_of(rel)
        if me is None:
            problems.append(f"{rel}: in no layer; put it under one of "
                            + ", ".join(d + "/" for _, d in LAYERS))
            continue
        edges[rel] = []
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = m.group(1) or m.group(2)
                found = resolve(root, rel, target)
                if found is None and m.group(2) is not None:
                    continue  # a system header
                if found is None:
                    problems.append(f'{rel}:{lineno}: #include "{target}" names no file by its '
                                    f"path from src/ or include/")
                    continue
                other = layer_of(found)
                if other is None:
                    problems.append(f'{rel}:{lineno}: #include "{target}" is {found}, which is '
                                    f"in no layer")
                    continue
                edges[rel].append((found, lineno, target))
                if other not in may_include(me):
                    way = "goes up" if RANK[other] > RANK[me] else "reaches past the public API"
                    problems.append(f'{rel}:{lineno}: #include "{target}" {way} from {me} to '
                                    f"{other}; {me} may include only " + ", ".join(may_include(me)))
    problems.extend(cycles(edges))
    return problems


def cycles(edges):
    """One line per include cycle, found by depth-first search."""
    problems = []
    state = {}  # 1: on the stack, 2: done
    stack = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt, lineno, target in edges.get(node, []):
            if state.get(nxt) == 1:
                loop = stack[stack.index(nxt):] + [nxt]
                problems.append(f'{node}:{lineno}: #include "{target}" closes a cycle: '
                                + " -> ".join(loop))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    return problems


def self_test():
    """The checker itself finds an upward edge, a cycle, a relative include
    in src/ and a file outside the layers, and accepts a clean tree."""
    def tree(files):
        d = tempfile.TemporaryDirectory()
        for rel, text in files.items():
            p = os.path.join(d.name, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as fh:
                fh.write(text)
        return d

    clean = {
        "include/pub.h": "",
        "src/util/util.h": '#include "pub.h"\n',
        "src/sys/s.c": '#include "util/util.h"\n#include "events/t.h"\n',
        "src/events/t.h": '#include "util/util.h"\n',
        "src/backend/b.h": '#include "sys/s.c"\n',
        "src/backend/pe_new.c": '#include "backend/b.h"\n',
        "src/core/c.c": '#include "backend/b.h"\n',
        "src/bench/h.c": '#include "pub.h"\n#include "bench/m.h"\n#include "common/t.h"\n',
        "src/bench/m.h": "",
        "src/common/t.h": '#include <stdio.h>\n',
        "tools/x/t.c": '#include "common/t.h"\n',
        "tools/x/own.h": "",
        "tools/x/m.c": '#include "own.h"\n#include "pub.h"\n',
    }
    bad = [
        ({"src/util/u.c": '#include "core/c.h"\n', "src/core/c.h": ""}, "goes up from util to core"),
        ({"src/backend/pe_new.c": '#include "core/c.h"\n', "src/core/c.h": ""},
         "goes up from backend to core"),
        ({"src/events/t.h": '#include "sys/s.h"\n', "src/sys/s.h": ""},
         "goes up from events to sys"),
        ({"src/core/a.h": '#include "core/b.h"\n', "src/core/b.h": '#include "core/a.h"\n'},
         "closes a cycle"),
        ({"src/core/a.c": '#include "a.h"\n', "src/core/a.h": ""}, "names no file"),
        ({"src/other/o.c": ""}, "in no layer"),
        ({"src/bench/h.c": '#include "core/c.c"\n'}, "reaches past the public API from bench"),
        ({"src/util/u.c": '#include <stdio.h>\n#include <core/c.h>\n', "src/core/c.h": ""},
         "goes up from util to core"),
        ({"src/bench/h.c": '#include "util/util.h"\n'}, "reaches past the public API from bench"),
        ({"src/common/t.h": '#include "util/util.h"\n'}, "reaches past the public API from common"),
        ({"src/common/t.h": '#include "bench/m.h"\n'}, "goes up from common to bench"),
        ({"src/util/u.c": '#include "common/t.h"\n'}, "goes up from util to common"),
        ({"src/core/c.c": '#include "common/t.h"\n'}, "goes up from core to common"),
    ]
    with tree(clean) as d:
        got = check(d)
        if got:
            return ["self-test: a clean tree was refused: " + "; ".join(got)]
    failures = []
    for files, want in bad:
        with tree(dict(clean, **files)) as d:
            got = check(d)
            if not any(want in p for p in got):
                failures.append(f"self-test: {sorted(files)} should fail with '{want}', got {got}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="project root (default: the parent of this script's directory)")
    ap.add_argument("--self-test", action="store_true",
                    help="first check that the checker finds known faults in a scratch tree")
    args = ap.parse_args()
    problems = self_test() if args.self_test else []
    problems += check(os.path.abspath(args.root))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering problem(s); see doc/ARCHITECTURE.md", file=sys.stderr)
        return 1
    print("layers: every include goes down or sideways, no cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
