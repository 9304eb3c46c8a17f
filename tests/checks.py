# SPDX-License-Identifier: MIT OR Apache-2.0
"""The Python tests' one way of checking: check(cond, what) records what
failed in failures and says it, and returns cond so that a test can go on
or stop; a test exits 1 when failures is not empty."""
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)
    return cond
