#!/usr/bin/env python3
"""Source-blind validation: the cases scored as a run whose software stack nobody named.

Each case's `source` becomes "(unknown source)" and its `framework` null, so no framework
profile matches and every unstated setting takes the fallback a new user's run would get
(docs/INPUTS.md, "Framework profiles": generic-modern from FP8-capable GPUs on, generic-2021
before, hf-trainer for fine-tuning cases). What the cases state (parallel sizes, recompute,
precision, ...) is kept. Prints `trainsim validate`'s family table and summary for the blinded
cases next to the same for the cases as published, so the two MAPEs can be compared.
Usage: tools/blind_validate.py BUILD/trainsim CASES.jsonl [CASES.jsonl ...]
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile


def blinded(path):
    out = []
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        case["source"] = "(unknown source)"
        if "framework" in case:
            case["framework"] = None
        out.append(json.dumps(case))
    return "\n".join(out) + "\n"


def summary(trainsim, files):
    run = subprocess.run([trainsim, "validate", *files], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"trainsim validate {' '.join(files)}: exit {run.returncode}: {run.stderr}")
    lines = run.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("family "))
    return [l for l in lines[start:] if l.strip() and not l.startswith("assumed:")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trainsim")
    ap.add_argument("cases", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        blind = []
        for i, f in enumerate(a.cases):
            p = pathlib.Path(tmp) / f"blind{i}.jsonl"
            p.write_text(blinded(f))
            blind.append(str(p))
        print("as published:")
        print("\n".join("  " + l for l in summary(a.trainsim, a.cases)))
        print("source-blind (no framework profile matches):")
        print("\n".join("  " + l for l in summary(a.trainsim, blind)))


if __name__ == "__main__":
    main()
