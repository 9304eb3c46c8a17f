#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Compile a DK_BENCH_LOOP benchmark at -O2 and check in its disassembly
that the loop an iteration runs is short and calls nothing: the body (here
an empty asm), a decrement and a branch back.

usage: check_bench_loop.py CC OBJDUMP INCLUDE_DIR WORK_DIR
"""
import os
import re
import subprocess
import sys

SRC = r'''
#include <dkbench.h>
void bm(dk_bench *b);
void bm(dk_bench *b)
{
    DK_BENCH_LOOP(b) dk_bench_clobber_memory();
}
'''


def main():
    cc, objdump, inc, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    src = os.path.join(work, "loop.c")
    obj = os.path.join(work, "loop.o")
    with open(src, "w") as f:
        f.write(SRC)
    subprocess.run([cc, "-std=c11", "-O2", "-I", inc, "-c", src, "-o", obj], check=True)
    dis = subprocess.run([objdump, "-d", "--no-show-raw-insn", obj], check=True,
                         capture_output=True, text=True).stdout
    insns = []  # (address, mnemonic, operands)
    for line in dis.splitlines():
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    if not insns:
        sys.exit("no instructions disassembled:\n" + dis)
    # Backward branches: the loops. The iteration loop is the shortest one.
    loops = []
    for i, (addr, mn, ops) in enumerate(insns):
        t = re.match(r"([0-9a-f]+)", ops)
        if (mn.startswith("j") or mn.startswith("b")) and t:
            target = int(t.group(1), 16)
            if target <= addr:
                body = [x for x in insns if target <= x[0] <= addr]
                loops.append(body)
    if not loops:
        sys.exit("no loop found in:\n" + dis)
    inner = min(loops, key=len)
    text = "\n".join("%x: %s %s" % x for x in inner)
    print("the iteration loop:\n" + text)
    if any("call" in x[1] or x[1] in ("bl", "blr") for x in inner):
        sys.exit("the iteration loop calls a function")
    if len(inner) > 3:
        sys.exit("the iteration loop has %d instructions, not a decrement and a branch"
                 % len(inner))


if __name__ == "__main__":
    main()
