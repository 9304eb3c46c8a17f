#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The line between libdkperf and dkperf, checked on the sources.

  tools    no file under tools/ decides by the backend's name: a statement
           that calls dk_sampler_backend() (or reads caps.name) and compares
           is an error; printing the name is not. The tool asks
           dk_backend_caps for facts instead.
  library  no string of libdkperf (src/; libdkbench, in libdkbench/, has a
           command line of its own) names a dkperf command or option:
           "dkperf stat", "(-c)", " -a,", "--per-core". The library says what
           is wrong; the tool says which of its options to change.

usage: check_facts.py [--self-test] ROOT
Prints one line per finding (file:line: what) and exits 1 when there is any.
--self-test first plants one of each mistake (and their allowed look-alikes)
under $TMPDIR and checks that exactly the mistakes are found.
"""
import os
import re
import sys
import tempfile

COMPARE = re.compile(r"\b(strn?cmp|strcasecmp|strncasecmp|memcmp)\s*\(|[=!]=|\bswitch\s*\(")
BACKEND = re.compile(r"\bdk_sampler_backend\s*\(|\bcaps\s*(\.|->)\s*name\b")
COMMANDS = r"(stat|record|report|bench|list|info)"
OPTION = re.compile(
    r"\bdkperf\s+" + COMMANDS + r"\b"          # a dkperf command
    r"|\(-[A-Za-z]\)"                          # "(-c)"
    r"|(^|[\s(:,;])-[A-Za-z](?=[\s,;:)]|$)"    # " -a," "-p PID"
    r"|(^|[\s(])--[a-z][a-z-]+\b")             # "--per-core"


def strip_comments(text):
    """Comments out, strings and line numbers kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def statements(text):
    """(line, statement) pairs: code split at ; { }."""
    line, start, buf = 1, 1, []
    for ch in text:
        if ch in ";{}":
            yield start, "".join(buf)
            buf, start = [], line
        else:
            if not buf and ch.isspace():
                start = line + (ch == "\n")
            buf.append(ch)
        if ch == "\n":
            line += 1
    yield start, "".join(buf)


def literals(text):
    """(line, text) of each string literal, adjacent ones joined."""
    code = strip_comments(text)
    found = []
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"((?:\s*"(?:[^"\\\n]|\\.)*")*)', code):
        parts = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0))
        found.append((code.count("\n", 0, m.start()) + 1, "".join(parts)))
    return found


def sources(root, sub):
    base = os.path.join(root, sub)
    for dirpath, dirs, files in os.walk(base):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(dirpath, f)


def compared(stmt, m):
    """Whether the name matched at m is an operand of a comparison: an
    argument of a strcmp-like call, or beside == or !=."""
    depth, i = 0, m.start() - 1
    while i >= 0:  # the call whose argument list holds it
        if stmt[i] == ")":
            depth += 1
        elif stmt[i] == "(":
            if depth == 0:
                callee = re.search(r"(\w+)\s*$", stmt[:i])
                if callee and COMPARE.match(callee.group(1) + "("):
                    return True
                break
            depth -= 1
        i -= 1
    end = m.end()
    if stmt[m.start():end].rstrip().endswith("("):  # past the call's own arguments
        depth = 1
        while end < len(stmt) and depth:
            depth += {"(": 1, ")": -1}.get(stmt[end], 0)
            end += 1
    after = re.match(r"\s*(\[[^]]*\]\s*)?([=!]=)", stmt[end:])
    before = re.search(r"([=!]=)\s*$", stmt[:m.start()])
    return bool(after or before)


def check_tools(root):
    findings = []
    for path in sources(root, "tools"):
        with open(path, encoding="utf-8") as f:
            code = strip_comments(f.read())
        for line, stmt in statements(code):
            if any(compared(stmt, m) for m in BACKEND.finditer(stmt)):
                findings.append(f"{path}:{line}: decides by the backend's name "
                                "(ask dk_sampler_caps for the fact instead)")
    return findings


def check_library(root):
    findings = []
    for path in sources(root, "src"):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for line, lit in literals(text):
            # Other programs' options are advice the library may give.
            m = OPTION.search(re.sub(r"\b(ulimit|sysctl)\s+-[A-Za-z]", "", lit))
            if m:
                findings.append(f"{path}:{line}: names a dkperf command or option "
                                f"({m.group(0).strip()!r} in \"{lit[:80]}\"): say what is "
                                "wrong and let the tool name its option")
    return findings


def self_test():
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as root:
        os.makedirs(os.path.join(root, "tools", "dkperf"))
        os.makedirs(os.path.join(root, "src", "backend"))
        os.makedirs(os.path.join(root, "libdkbench"))
        files = {
            "tools/dkperf/bad.c":
                'bool linux_backend = strcmp(dk_sampler_backend(s), "perf_event") == 0;\n'
                'if (caps.name[0] == \'k\')\n    x();\n',
            "tools/dkperf/good.c":
                '/* strcmp(dk_sampler_backend(s), "kperf") in a comment */\n'
                'fprintf(out, "%s backend", dk_sampler_backend(s));\n'
                'if (s != NULL)\n    rep.backend = dk_sampler_backend(s);\n'
                'if (strcmp(name, "kperf") == 0)\n    return DK_BACKEND_KPERF;\n',
            "src/backend/bad.c":
                'return fail("give a period instead (-c) or a lower frequency");\n'
                'return fail("count every CPU (system scope, with root: dkperf stat "\n'
                '            "-a, or -a -p PID)");\n'
                'return fail("split it with --per-core");\n',
            "src/backend/good.c":
                '/* as dkperf stat -a does */\n'
                'return fail("event %s: not in libdkperf\'s tables; x86-64 and non-root");\n'
                'return fail("raise the open-file limit (ulimit -n, now %ld)");\n'
                'return fail("give a period (%s/1000000) or sample on the timer");\n',
            "libdkbench/main.c": 'puts("save it with --save-baseline");\n',
        }
        for name, text in files.items():
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        tools, library = check_tools(root), check_library(root)
        want_tools = [os.path.join(root, "tools/dkperf/bad.c") + ":" + str(n) for n in (1, 2)]
        want_library = [os.path.join(root, "src/backend/bad.c") + ":" + str(n) for n in (1, 2, 4)]
        got_tools = [f.split(": ")[0] for f in tools]
        got_library = [f.split(": ")[0] for f in library]
        ok = True
        if got_tools != want_tools:
            print(f"self-test: the tools rule found {got_tools}, wanted {want_tools}")
            ok = False
        if got_library != want_library:
            print(f"self-test: the library rule found {got_library}, wanted {want_library}")
            ok = False
        return ok


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-5], file=sys.stderr)
        return 2
    if "--self-test" in argv and not self_test():
        return 1
    findings = check_tools(args[0]) + check_library(args[0])
    for f in findings:
        print(f)
    if findings:
        return 1
    print("no file under tools/ decides by the backend's name; no libdkperf string names a "
          "dkperf option")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
