#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""bench/time_to_answer/time_to_answer.py with stand-ins for the three
programs, whose estimates are set here: its spreads, ratios and verdicts
against figures worked out by hand, including the bare loop's (--bare).

usage: check_time_to_answer.py SOURCE_DIR
"""
import os
import stat
import subprocess
import sys
import tempfile

# Per body, the estimates of the 2 runs (--quick) of each program, in ns.
FAKES = {
    "dkbench": r'''
import json, sys
name = sys.argv[1].strip("^$")
est = {"body/long": [100.0, 104.0], "body/short": [5.0, 5.02]}[name]
k = COUNT("dk" + name)
doc = {"results": [{"name": name, "n_preempted": 1, "n_samples": 40,
                    "stop_reason": "precision reached",
                    "measures": [{"name": "time", "estimator": "Theil-Sen",
                                  "slope": {"point": est[k], "lo": est[k] * 0.99, "hi": est[k] * 1.01},
                                  "fit": {"intercept": 10}}]}]}
json.dump(doc, open(sys.argv[sys.argv.index("--json") + 1], "w"))
''',
    "gbench": r'''
import json, sys
name = sys.argv[1].split("=^")[1].rstrip("$")
reps = any(a.startswith("--benchmark_repetitions") for a in sys.argv)
est = {"body/long": [100.0, 130.0], "body/short": [5.0, 5.5]}[name]
k = COUNT("g" + name + str(reps))
print(json.dumps({"benchmarks": [{"aggregate_name": "median", "real_time": est[k], "time_unit": "ns"}]}))
''',
    "bare": r'''
import sys
name = "body/" + sys.argv[1]
# median chunk, 10% quantile, mean per run
est = {"body/long": [(99.0, 98.0, 101.0), (101.0, 98.5, 106.0)],
       "body/short": [(5.0, 4.9, 5.5), (5.2, 5.1, 5.5)]}[name]
print("%g %g %g 300" % est[COUNT("bare" + name)])
''',
}
COUNTER = r'''
import os
def COUNT(key):
    path = os.path.join(os.environ["TTA_FAKE_DIR"], key.replace("/", "_"))
    k = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(k + 1))
    return k
'''


def main():
    src = sys.argv[1]
    script = os.path.join(src, "bench", "time_to_answer", "time_to_answer.py")
    with tempfile.TemporaryDirectory() as tmp:
        exes = {}
        for name, body in FAKES.items():
            path = os.path.join(tmp, "fake-" + name)
            with open(path, "w") as f:
                f.write("#!%s\n%s\n%s" % (sys.executable, COUNTER, body))
            os.chmod(path, stat.S_IRWXU)
            exes[name] = path
        env = dict(os.environ, TTA_FAKE_DIR=tmp)
        p = subprocess.run([sys.executable, script, "--quick", "--dkbench", exes["dkbench"],
                            "--gbench", exes["gbench"], "--bare", exes["bare"]],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = p.stdout
    print(out)
    failures = []

    def want(text):
        if text not in out:
            failures.append("missing: " + text)

    if p.returncode != 0:
        failures.append("exit status %d" % p.returncode)
    # body/long: dkbench 100, 104 -> median 102, spread 2/102 = 1.96%;
    # bare median chunks 99, 101 -> 1.00%, 10% quantiles 98, 98.5 -> 0.25%,
    # means 101, 106 -> 2.42%: the bare loop held, dkbench did not
    # (1.9608 / 0.2545 = 7.71).
    want("dkbench spread 1.96% <= 1%: MISSED")
    want("spread 1.00% (median chunk), 0.25% (10% quantile), 2.42% (mean)")
    want("the bare loop reached +-1% (0.25%)")
    want("7.71 times it, is the harness's")
    # body/short: dkbench 5, 5.02 -> 0.20% met; bare 5, 5.2 -> 1.96%,
    # 4.9, 5.1 -> 2.00%, 5.5, 5.5 -> 0%: nothing to say on dkbench.
    want("dkbench spread 0.20% <= 1%: met")
    want("spread 1.96% (median chunk), 2.00% (10% quantile), 0.00% (mean)")
    # gbench 10x: 100, 130 -> median 115, spread 13.04%; neither reached +-1%.
    want("neither within +-1%: dkbench spread 1.96%")
    want("gbench 2x0.01 s 13.04%")
    want("(dkbench no wider, in ")
    if out.count("the bare loop reached") != 1 or "no estimator of those reached" in out:
        failures.append("the machine's or the harness's share said for the wrong body")
    for f in failures:
        print("FAIL: " + f)
    print("check_time_to_answer: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
