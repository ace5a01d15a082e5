#!/usr/bin/env python3
"""Lists the MoE cases of one family with their signed errors, and the bias by model and release.

Usage:
  trainsim validate CASES.jsonl --json > v.json      (in-sample), or
  trainsim calibrate CASES.jsonl --leave-one-source-out --json > v.json   (held out)
  python3 tools/moe_rows.py CASES.jsonl v.json [--family mbridge] [--model GPT-OSS]

The release is the container section the case's source names ("26.04 NeMo Container"); rows
of one configuration differ by release (docs/VALIDATION.md, "Known weak spots").
"""
import argparse
import collections
import json
import re


def release(source):
    m = re.search(r"section '([0-9.]+)", source or "")
    return m.group(1) if m else "-"


def layout(p):
    keys = ("tp", "pp", "vpp", "cp", "ep")
    return " ".join(f"{k}{p.get(k) if p.get(k) is not None else '-'}" for k in keys)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("results", help="validate --json or calibrate --leave-one-source-out --json")
    ap.add_argument("--family", default="mbridge")
    ap.add_argument("--model", default="", help="substring of the model name")
    a = ap.parse_args()
    cases = {}
    with open(a.cases) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                cases[r["id"]] = r
    with open(a.results) as f:
        results = json.load(f)["cases"]
    rows = []
    for c in results:
        r = cases.get(c["id"])
        if r is None or c.get("skipped") or c["family"] != a.family or not r["model"].get("moe"):
            continue
        if a.model not in r["model"]["name"]:
            continue
        rows.append((r["model"]["name"], r["hardware"], release(r["source"]), c["error"], c["id"],
                     r["precision"], layout(r["parallel"]), r["gpus"], r["mbs"], c["target_s"],
                     c["predicted_s"]))
    rows.sort()
    for m, hw, rel, err, cid, prec, lay, gpus, mbs, tgt, pred in rows:
        print(f"{m[:15]:15} {hw[:13]:13} {rel:9} {100 * err:+6.1f}% {cid:12} {prec:6} {lay:28} "
              f"g{gpus:<5} mbs{mbs:<2} measured {tgt:8.3f} s predicted {pred:8.3f} s")
    for key, name in ((0, "model"), (2, "release")):
        groups = collections.defaultdict(list)
        for row in rows:
            groups[row[key]].append(row[3])
        print(f"\nby {name}: n, bias, MAPE")
        for k in sorted(groups):
            e = groups[k]
            print(f"  {k:18} {len(e):3} {100 * sum(e) / len(e):+6.1f}% "
                  f"{100 * sum(map(abs, e)) / len(e):5.1f}%")


if __name__ == "__main__":
    main()
