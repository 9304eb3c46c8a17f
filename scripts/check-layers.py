#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Check that the #include "..." lines of src/, libdkbench/, tools/ and
include/ respect the layers of doc/ARCHITECTURE.md: a file may include only headers of its own
layer or of a lower one, and no chain of includes may come back to where it
started.

Layers, lowest first, chosen by directory so that new files are covered:

    public   include/          the installed headers; usable by every layer
    util     src/util/         error detail, strings, sorting
    events   src/events/       generated event tables (data)
    sys      src/sys/          bindings to the frameworks and libSystem
    backend  src/backend/      the backend contract, and a folder per backend
    core     src/core/         the public API over the backends
    common   src/common/       UTF-8, untrusted text, files that untrusted
                               data names, JSON, statistics, the clock:
                               compiled into libdkbench and the tools, not
                               libdkperf, so it includes nothing of ours but
                               itself
    bench    libdkbench/       libdkbench, on the public API and common
    tools    tools/            the dkperf command-line tool, on the public API

In src/ every quoted include names its path from src/ ("core/core.h") or
from include/ ("dkperf/kperf.h"); libdkbench/ names its own headers by their
path from the project root ("libdkbench/harness.h") and the common layer's
from src/; tools/ may also include its own files by a path relative to the
including file, and the headers of the folders of tools/common/ (dkrec/ the
record file, process/ child processes, symbols/ the symbol readers) by name.

With --objects, the calls are checked too: the defined and undefined
symbols of the objects CMake builds (nm) must follow the same table. An
object belongs to the layer of its source file; a symbol it leaves undefined
and another object defines must come from its own layer or one below it in
the same library, and libdkbench and the tools reach libdkperf (and the tools
libdkbench) only through the public API: a function declared DK_EXPORT in
include/ and listed in the library's version script (src/dkperf.map,
libdkbench/dkbench.map). The list of objects is a file CMake writes
(tests/CMakeLists.txt), one target a line:

    TARGET<TAB>SOURCE_DIR<TAB>OBJECT;OBJECT;...

where each object lies under TARGET.dir/ at the path of its source relative
to SOURCE_DIR, as CMake lays objects out.

usage: check-layers.py [--root DIR] [--objects LIST [--nm NM]] [--self-test]
       check-layers.py --self-test-only
Exit status 0 when every edge goes down or sideways and there is no cycle;
1 with one line per offending include or symbol otherwise.
"""
import argparse
import fnmatch
import os
import re
import subprocess
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
    ("bench", "libdkbench"),
    ("tools", "tools"),
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
# Layers that may include less than everything below them: libdkbench is
# built on the public API alone, as any user of libdkperf would be, and on
# the common layer, which is compiled into it; the common layer is in no
# library of the layers below it, so it may include none of them. libdkperf's
# layers rank below common: an include of it from them goes up. The tool
# links the shared library and so sees its public API alone.
ONLY = {"common": ("public", "common"), "bench": ("public", "common", "bench"),
        "tools": ("public", "common", "tools")}


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
    for top in ("src", "libdkbench", "tools", "include"):
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
        # Shared by the tools, a folder per purpose (dkrec/, process/,
        # symbols/), each on their include path: its headers go by name.
        bases.append("tools/common")
        common = os.path.join(root, "tools", "common")
        if os.path.isdir(common):
            bases.extend("tools/common/" + d for d in sorted(os.listdir(common))
                         if os.path.isdir(os.path.join(common, d)))
    if rel.startswith(("src/", "libdkbench/", "tools/")):
        bases.append("src")
    if target.startswith("libdkbench/"):
        bases.append(".")  # libdkbench's own headers, by their path from the root
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
                                    f"path from src/ or include/ (libdkbench's from the root)")
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


# The libraries the layers are linked into. The common layer is compiled
# into libdkbench and the tools alike and belongs to neither; the tools are
# the dkperf program, a user of the libraries' public API.
LIBRARY = {"util": "libdkperf", "events": "libdkperf", "sys": "libdkperf",
           "backend": "libdkperf", "core": "libdkperf", "bench": "libdkbench"}
VERSION_SCRIPT = {"libdkperf": "src/dkperf.map", "libdkbench": "libdkbench/dkbench.map"}
# Whose public API a layer may call, besides its own library's lower layers.
USES_PUBLIC = {"bench": ("libdkperf",), "tools": ("libdkperf", "libdkbench")}
USES_COMMON = ("common", "bench", "tools")


def may_use(me):
    """What a file of layer me may call, in words."""
    if me in USES_PUBLIC:
        return ("the public API of " + " and ".join(USES_PUBLIC[me])
                + ", common, " + me)
    if me in LIBRARY:
        mine = LIBRARY[me]
        return ", ".join(n for n, _ in LAYERS[:RANK[me] + 1] if LIBRARY.get(n) == mine)
    return me


def public_api(root):
    """{library: {name: why it is not public, or None}} as a function:
    public(lib, name) -> None when name is public, else the reason."""
    exported = set()  # names declared DK_EXPORT in include/
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "include")):
        for f in filenames:
            if not f.endswith(".h"):
                continue
            with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
            text = re.sub(r"^\s*#.*?(?<!\\)$", " ", text, flags=re.M | re.S)
            for m in re.finditer(r"\bDK_EXPORT\b([^;{}]*?)\b([A-Za-z_]\w*)\s*\(", text):
                exported.add(m.group(2))
    patterns = {}
    for lib, rel in VERSION_SCRIPT.items():
        patterns[lib] = []
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = re.sub(r"/\*.*?\*/", " ", fh.read(), flags=re.S)
        for node in re.finditer(r"global\s*:(.*?)(?:local\s*:|})", text, flags=re.S):
            patterns[lib] += [p.strip() for p in node.group(1).split(";") if p.strip()]

    def why_not(lib, name):
        reasons = []
        if name not in exported:
            reasons.append("not declared DK_EXPORT in include/")
        if not any(fnmatch.fnmatchcase(name, p) for p in patterns.get(lib, [])):
            reasons.append("not in " + VERSION_SCRIPT[lib])
        return " and ".join(reasons) or None
    return why_not


def parse_nm(text, underscore=False):
    """(defined, undefined) global names of nm -P output (name type ...)."""
    defined, undefined = set(), set()
    for line in text.splitlines():
        f = line.split()
        if len(f) < 2 or len(f[1]) != 1:
            continue
        name, kind = f[0], f[1]
        if underscore and name.startswith("_"):
            name = name[1:]
        if kind in "Uwv":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, undefined


def check_symbols(root, objects):
    """objects: [(source path relative to root, defined, undefined)]. One
    line per use of a symbol defined in a layer the user may not call."""
    problems = []
    why_not = public_api(root)
    owner = {}  # symbol -> [(source, layer)]
    placed = []
    for src, defined, undefined in objects:
        me = layer_of(src)
        if me is None or me == "public":
            problems.append(f"{src}: an object of a source in no layer; put it under one of "
                            + ", ".join(d + "/" for _, d in LAYERS[1:]))
            continue
        placed.append((src, me, undefined))
        for name in defined:
            owner.setdefault(name, []).append((src, me))
    for src, me, undefined in placed:
        for name in sorted(undefined):
            found = owner.get(name)
            if not found:
                continue  # the C library, the system, a framework
            lines = []
            for defsrc, other in found:
                why = use_problem(me, other, name, why_not)
                if why is None:
                    lines = []
                    break  # one definition this layer may reach is enough
                lines.append(f"{src}: uses {name}, defined in {defsrc}: {why}; "
                             f"{me} may use only {may_use(me)}")
            problems.extend(lines)
    return problems


def use_problem(me, other, name, why_not):
    """None when layer me may use a symbol that layer other defines, else why not."""
    if other == me:
        return None
    mine, theirs = LIBRARY.get(me), LIBRARY.get(other)
    if theirs is not None and theirs == mine:
        return None if RANK[other] < RANK[me] else f"the call goes up from {me} to {other}"
    if theirs in USES_PUBLIC.get(me, ()):
        why = why_not(theirs, name)
        return None if why is None else (f"{me} calls {theirs} ({other}) outside its "
                                         f"public API ({why})")
    if other == "common" and me in USES_COMMON:
        return None
    if RANK[other] > RANK[me]:
        return f"the call goes up from {me} to {other}"
    return f"the call from {me} reaches past the public API into {other}"


def read_objects(root, listing, nm):
    """[(source, defined, undefined)] for the objects the listing names."""
    found, problems = [], []  # (object, source)
    with open(listing, encoding="utf-8") as fh:
        rows = [ln.rstrip("\n").split("\t") for ln in fh if ln.strip()]
    for row in rows:
        if len(row) != 3:
            problems.append(f"{listing}: a line that is not TARGET<TAB>SOURCE_DIR<TAB>OBJECTS: "
                            + "\t".join(row))
            continue
        target, srcdir, objs = row
        objs = [o for o in objs.split(";") if o]
        if not objs:
            problems.append(f"{listing}: target {target} lists no object")
        key = f"/{target}.dir/"
        for obj in objs:
            at = obj.replace(os.sep, "/").find(key)
            if at < 0:
                problems.append(f"{obj}: not under {target}.dir/; cannot tell its source")
            elif not os.path.isfile(obj):
                problems.append(f"{obj}: missing; build the project before this check")
            else:
                rest = re.sub(r"\.(o|obj)$", "", obj.replace(os.sep, "/")[at + len(key):])
                src = os.path.relpath(os.path.join(srcdir, rest), root).replace(os.sep, "/")
                found.append((obj, src))
    if not found:
        return [], problems + [f"{listing}: no object to check"]
    # One nm for all: -A starts each line with "OBJECT: ".
    run = subprocess.run([nm, "-A", "-P"] + [o for o, _ in found], capture_output=True, text=True)
    if run.returncode != 0:
        return [], problems + [f"{nm} failed: {run.stderr.strip()}"]
    lines = {o: [] for o, _ in found}
    for line in run.stdout.splitlines():
        at = line.rfind(": ")
        if at > 0 and line[:at] in lines:
            lines[line[:at]].append(line[at + 2:])
    objects = []
    for obj, src in found:
        with open(obj, "rb") as fh:  # Mach-O symbols start with an underscore
            macho = fh.read(4) in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe")
        objects.append((src, *parse_nm("\n".join(lines[obj]), underscore=macho)))
    if not any(d for _, d, _ in objects):
        problems.append(f"{listing}: no object defines a symbol; is {nm} an nm?")
    return objects, problems


def self_test():
    """The checker itself finds an upward edge, a cycle, a relative include
    in src/ or libdkbench/ and a file outside the layers, and accepts a
    clean tree."""
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
        "src/backend/perf_event/pe_new.c": '#include "backend/b.h"\n',
        "src/core/c.c": '#include "backend/b.h"\n',
        "libdkbench/h.c": '#include "pub.h"\n#include "libdkbench/m.h"\n#include "common/t.h"\n',
        "libdkbench/m.h": "",
        "src/common/t.h": '#include <stdio.h>\n',
        "tools/x/t.c": '#include "common/t.h"\n',
        "tools/x/own.h": "",
        "tools/x/m.c": '#include "own.h"\n#include "pub.h"\n#include "rec.h"\n',
        "tools/common/rec/rec.h": "",
    }
    bad = [
        ({"src/util/u.c": '#include "core/c.h"\n', "src/core/c.h": ""}, "goes up from util to core"),
        ({"src/backend/perf_event/pe_new.c": '#include "core/c.h"\n', "src/core/c.h": ""},
         "goes up from backend to core"),
        ({"src/events/t.h": '#include "sys/s.h"\n', "src/sys/s.h": ""},
         "goes up from events to sys"),
        ({"src/core/a.h": '#include "core/b.h"\n', "src/core/b.h": '#include "core/a.h"\n'},
         "closes a cycle"),
        ({"src/core/a.c": '#include "a.h"\n', "src/core/a.h": ""}, "names no file"),
        ({"src/other/o.c": ""}, "in no layer"),
        ({"libdkbench/h.c": '#include "core/c.c"\n'}, "reaches past the public API from bench"),
        ({"src/util/u.c": '#include <stdio.h>\n#include <core/c.h>\n', "src/core/c.h": ""},
         "goes up from util to core"),
        ({"libdkbench/h.c": '#include "util/util.h"\n'}, "reaches past the public API from bench"),
        ({"tools/x/m.c": '#include "util/util.h"\n', "src/util/util.h": ""},
         "reaches past the public API from tools"),
        ({"src/common/t.h": '#include "util/util.h"\n'}, "reaches past the public API from common"),
        ({"src/common/t.h": '#include "libdkbench/m.h"\n'}, "goes up from common to bench"),
        ({"libdkbench/h.c": '#include "m.h"\n'}, "names no file"),
        ({"tools/x/m.c": '#include "libdkbench/m.h"\n'}, "reaches past the public API from tools"),
        ({"src/util/u.c": '#include "common/t.h"\n'}, "goes up from util to common"),
        ({"src/core/c.c": '#include "common/t.h"\n'}, "goes up from core to common"),
        ({"src/core/c.c": '#include "rec.h"\n'}, "names no file"),
        ({"tools/common/rec/rec.h": '#include "util/util.h"\n', "src/util/util.h": ""},
         "reaches past the public API from tools"),
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
    with tree(SYMBOL_TREE) as d:
        failures += self_test_symbols(d)
    return failures


# The self-test's public API: a header, and version scripts in both forms.
SYMBOL_TREE = {
    "include/dkperf.h": "#define DK_EXPORT\nDK_EXPORT int dk_open(void);\n"
                        "DK_EXPORT unsigned long\n    dk_scale(unsigned long c); /* two lines */\n"
                        "int dk_unexported(void);\nDK_EXPORT int dk_unlisted(void);\n",
    "include/dkbench.h": "DK_EXPORT int dk_bench_run(void);\n",
    "src/dkperf.map": "V { global: dk_open; dk_scale; dk_unexported; local: *; };\n",
    "libdkbench/dkbench.map": "V { global: dk_bench_*; local: *; };\n",
}


def self_test_symbols(root):
    """The symbol check finds a call up, a call past the public API and a
    call into the tool, each in a line naming the symbol and both layers,
    reads nm -P output (and Mach-O's leading underscore), and accepts a
    clean set of objects."""
    def nm(text):
        return text.replace("|", "\n")

    # source -> nm -P text; a clean build of every layer.
    clean = {
        "src/util/u.c": "dk__fail T 0 10|strlen U",
        "src/sys/s.c": "dk__load T 0 10|dk__fail U",
        "src/backend/b.c": "dk__be_read T 0 10|dk__scale_raw T 10 4|dk__load U",
        "src/core/c.c": "dk_open T 0 10|dk_scale T 10 4|dk__be_read U|dk__scale_raw U"
                        "|dk__fail U|dk_unexported T 20 4|dk_unlisted T 30 4",
        "src/common/t.c": "dk__text_ok T 0 10|memchr U",
        "libdkbench/h.c": "dk_bench_run T 0 10|dk__bench_stats T 10 4|dk_open U|dk_scale U"
                         "|dk__text_ok U",
        "tools/dkperf/m.c": "main T 0 10|dk_open U|dk_bench_run U|dk__text_ok U|dk__tool_x U",
        "tools/common/x.c": "dk__tool_x T 0 10|dk__text_ok w",
    }
    cases = [  # (changes, what one line must hold)
        ({"src/backend/b.c": clean["src/backend/b.c"] + "|dk_scale U"},
         ("src/backend/b.c: uses dk_scale, defined in src/core/c.c",
          "goes up from backend to core")),
        ({"src/util/u.c": clean["src/util/u.c"] + "|dk__load U"},
         ("src/util/u.c: uses dk__load, defined in src/sys/s.c", "goes up from util to sys")),
        ({"tools/dkperf/m.c": clean["tools/dkperf/m.c"] + "|dk__fail U"},
         ("tools/dkperf/m.c: uses dk__fail, defined in src/util/u.c",
          "tools calls libdkperf (util) outside its public API",
          "not declared DK_EXPORT in include/ and not in src/dkperf.map")),
        ({"tools/dkperf/m.c": clean["tools/dkperf/m.c"] + "|dk_unexported U"},
         ("uses dk_unexported", "(not declared DK_EXPORT in include/)")),
        ({"tools/dkperf/m.c": clean["tools/dkperf/m.c"] + "|dk_unlisted U"},
         ("uses dk_unlisted", "(not in src/dkperf.map)")),
        ({"tools/dkperf/m.c": clean["tools/dkperf/m.c"] + "|dk__bench_stats U"},
         ("uses dk__bench_stats", "tools calls libdkbench (bench) outside its public API")),
        ({"libdkbench/h.c": clean["libdkbench/h.c"] + "|dk__be_read U"},
         ("uses dk__be_read", "bench calls libdkperf (backend) outside its public API")),
        ({"libdkbench/h.c": clean["libdkbench/h.c"] + "|dk__tool_x U"},
         ("libdkbench/h.c: uses dk__tool_x, defined in tools/common/x.c",
          "goes up from bench to tools")),
        ({"src/common/t.c": clean["src/common/t.c"] + "|dk_open U"},
         ("src/common/t.c: uses dk_open", "from common reaches past the public API into core")),
        ({"src/core/c.c": clean["src/core/c.c"] + "|dk__text_ok U"},
         ("src/core/c.c: uses dk__text_ok, defined in src/common/t.c",
          "goes up from core to common")),
        ({"src/other/o.c": "f T 0 1"}, ("src/other/o.c: an object of a source in no layer",)),
    ]

    def run(listing, underscore=False):
        objs = []
        for src, text in sorted(listing.items()):
            if underscore:
                text = "|".join("_" + ln for ln in text.split("|"))
            objs.append((src, *parse_nm(nm(text), underscore)))
        return check_symbols(root, objs)

    failures = []
    for underscore in (False, True):
        got = run(clean, underscore)
        if got:
            failures.append("self-test: clean objects were refused: " + "; ".join(got))
    for changes, want in cases:
        got = run(dict(clean, **changes))
        if not any(all(w in p for w in want) for p in got):
            failures.append(f"self-test: {sorted(changes)} should fail with {want}, got {got}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                    help="project root (default: the parent of this script's directory)")
    ap.add_argument("--objects", metavar="LIST",
                    help="also check the symbols of the objects this file lists (CMake writes it)")
    ap.add_argument("--nm", default="nm", help="the nm to read the objects with (default: nm)")
    ap.add_argument("--self-test", action="store_true",
                    help="first check that the checker finds known faults in a scratch tree")
    ap.add_argument("--self-test-only", action="store_true",
                    help="only check that the checker finds known faults")
    args = ap.parse_args()
    problems = self_test() if args.self_test or args.self_test_only else []
    if args.self_test_only:
        for p in problems:
            print(p)
        if problems:
            return 1
        print("layers: the self-test finds every planted fault and accepts the clean cases")
        return 0
    root = os.path.abspath(args.root)
    problems += check(root)
    if args.objects:
        objects, trouble = read_objects(root, args.objects, args.nm)
        problems += trouble + check_symbols(root, objects)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering problem(s); see doc/ARCHITECTURE.md", file=sys.stderr)
        return 1
    if args.objects:
        print(f"layers: every include and every call of {len(objects)} objects goes down "
              "or sideways, no cycles")
    else:
        print("layers: every include goes down or sideways, no cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
