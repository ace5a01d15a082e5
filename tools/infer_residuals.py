#!/usr/bin/env python3
"""Break `trainsim validate --json` residuals on inference cases down by regime.

Usage: tools/infer_residuals.py build/trainsim CASES.jsonl [--family inf_trtllm]
Prints MAPE, mean signed error (bias) and count per hardware, weight dtype, MoE vs
dense, tp, model, ISL/OSL and predicted batch, so the physics that is wrong shows as a
biased regime rather than one bad case.
"""
import argparse, collections, json, subprocess

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trainsim")
    ap.add_argument("cases")
    ap.add_argument("--family", default="inf_trtllm")
    ap.add_argument("--worst", type=int, default=10)
    a = ap.parse_args()
    out = subprocess.run([a.trainsim, "validate", "--json", a.cases],
                         capture_output=True, text=True, check=False).stdout
    res = {c["id"]: c for c in json.loads(out)["cases"]}
    rows = []
    for line in open(a.cases):
        c = json.loads(line)
        r = res.get(c["id"])
        if r is None or r.get("family") != a.family or r.get("error") is None:
            continue
        assumed = {x["field"]: x["value"] for x in r.get("assumed", [])}
        moe = c["model"].get("moe")
        rows.append({
            "id": c["id"], "err": r["error"],
            "hw": c["hardware"], "dtype": c["weight_dtype"],
            "moe": "moe" if moe else "dense", "tp": c["parallel"]["tp"],
            "model": c["model"]["name"][:28], "engine": c["engine"].split()[0],
            "shape": f'{c["prompt_len"]}/{c["output_len"]}',
            "batch": assumed.get("batch", c.get("batch")),
        })
    def table(key):
        g = collections.defaultdict(list)
        for r in rows:
            g[r[key]].append(r["err"])
        print(f"\n== by {key}")
        for k, e in sorted(g.items(), key=lambda kv: str(kv[0])):
            mape = 100 * sum(abs(x) for x in e) / len(e)
            bias = 100 * sum(e) / len(e)
            print(f"  {str(k):30s} n={len(e):4d} MAPE={mape:6.1f}%  bias={bias:+6.1f}%")
    allm = 100 * sum(abs(r["err"]) for r in rows) / max(1, len(rows))
    print(f"{a.family}: {len(rows)} cases, MAPE {allm:.1f}%")
    for k in ("hw", "dtype", "moe", "tp", "model", "shape", "engine"):
        table(k)
    print("\n== worst")
    for r in sorted(rows, key=lambda r: -abs(r["err"]))[:a.worst]:
        print(f'  {r["id"]:16s} {100*r["err"]:+7.1f}% {r["model"]:28s} {r["hw"]:18s} tp{r["tp"]} {r["dtype"]:6s} {r["shape"]:10s} b={r["batch"]}')

if __name__ == "__main__":
    main()
