#!/usr/bin/env python3
"""Golden step reports and the breakdown invariant.

For every invocation in tests/golden/cases.txt, runs `trainsim simulate ... --json` and checks
  * step_time_s, peak_mem_bytes and mfu against tests/golden/step_reports.jsonl (relative
    tolerance per row, default 1e-6): results change only on purpose;
  * the breakdown invariant: every entry of time_breakdown_s except `recompute` (a part of
    `compute`) adds up to step_time_s (relative 1e-9).
Usage: golden_test.py BIN [--write]   (--write regenerates the expectations)
"""
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "golden", "cases.txt")
EXPECT = os.path.join(HERE, "golden", "step_reports.jsonl")
KEYS = ("step_time_s", "peak_mem_bytes", "mfu")


def read_cases():
    with open(CASES) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def simulate(binary, args):
    out = subprocess.run([binary, "simulate", *shlex.split(args), "--json"],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"{args}: exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def breakdown_error(report):
    parts = {k: v for k, v in report["time_breakdown_s"].items() if k != "recompute"}
    total = sum(parts.values())
    step = report["step_time_s"]
    return abs(total - step) / step, total, parts


def main():
    binary = sys.argv[1]
    write = "--write" in sys.argv[2:]
    cases = read_cases()
    expected = {}
    if not write:
        with open(EXPECT) as f:
            for line in f:
                row = json.loads(line)
                expected[row["args"]] = row
    failures = []
    rows = []
    for args in cases:
        try:
            rep = simulate(binary, args)
        except Exception as e:  # noqa: BLE001 - report and continue
            failures.append(str(e))
            continue
        err, total, parts = breakdown_error(rep)
        if err > 1e-9:
            failures.append(f"{args}: breakdown adds up to {total:.6g} s, step_time_s "
                            f"{rep['step_time_s']:.6g} s ({parts})")
        got = {k: rep[k] for k in KEYS}
        rows.append({"args": args, "expect": got, "rel_tol": 1e-6})
        if write:
            continue
        row = expected.get(args)
        if row is None:
            failures.append(f"{args}: no expectation (run with --write)")
            continue
        for k in KEYS:
            want, tol = row["expect"][k], row.get("rel_tol", 1e-6)
            if abs(got[k] - want) > tol * max(abs(want), 1e-30):
                failures.append(f"{args}: {k} {got[k]!r}, expected {want!r} (rel tol {tol})")
    if write:
        with open(EXPECT, "w") as f:
            for r in rows:
                f.write(json.dumps(r, sort_keys=True) + "\n")
    for msg in failures:
        print("FAIL -", msg)
    failed = {msg.split(":")[0] for msg in failures}
    print(f"{len(cases) - len(failed)}/{len(cases)} golden cases ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
