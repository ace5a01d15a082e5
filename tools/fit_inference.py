#!/usr/bin/env python3
"""Fits the calibrated keys of data/inference_engines.json on the inference validation cases.

Coordinate descent over each engine's free keys, minimising the MAPE of that engine's cases
(`trainsim validate --json`; one rebuild per evaluation since the profiles are embedded).
Usage: tools/fit_inference.py BUILD_DIR CASES.jsonl [--engine ID] [--rounds N] [--write]
Prints the fitted values and the in-sample MAPE per engine; --write stores them in the JSON.
"""
import json, subprocess, sys, argparse, pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "inference_engines.json"
FREE = {  # key: (min, max, multiplicative steps tried)
    "tensorrt-llm": ["gemm_factor", "decode_hbm_fraction", "kernel_latency_us", "step_overhead_us"],
    "vllm": ["step_overhead_us", "kernel_latency_us", "decode_hbm_fraction", "gptq4_gemm_overhead_us",
             "gptq8_gemm_overhead_us", "awq_gemm_overhead_us", "gemm_factor"],
    "transformers": ["layer_overhead_us", "step_overhead_us", "decode_hbm_fraction",
                     "gptq4_gemm_overhead_us", "gptq8_gemm_overhead_us", "awq_gemm_overhead_us",
                     "gemm_factor"],
}
BOUNDS = {"gemm_factor": (0.3, 2.0), "decode_hbm_fraction": (0.4, 0.95),
          "kernel_latency_us": (0.0, 30.0), "step_overhead_us": (0.0, 20000.0),
          "layer_overhead_us": (0.0, 3000.0), "gptq4_gemm_overhead_us": (0.0, 500.0),
          "gptq8_gemm_overhead_us": (0.0, 500.0),
          "awq_gemm_overhead_us": (0.0, 500.0)}


def evaluate(build, cases, doc, engine_of):
    DATA.write_text(json.dumps(doc, indent=2) + "\n")
    subprocess.run(["cmake", "--build", build, "-j", "2", "--target", "trainsim"], check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([f"{build}/trainsim", "validate", cases, "--json"], check=True,
                         capture_output=True, text=True).stdout
    errs = {}
    for c in json.loads(out)["cases"]:
        if c.get("skipped"):
            continue
        errs.setdefault(engine_of[c["id"]], []).append(abs(c["error"]))
    return {e: sum(v) / len(v) for e, v in errs.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build"); ap.add_argument("cases")
    ap.add_argument("--engine", action="append"); ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    original = DATA.read_text()
    doc = json.loads(original)
    engine_of = {}
    for line in open(a.cases):
        c = json.loads(line)
        e = c["engine"].lower()
        engine_of[c["id"]] = ("tensorrt-llm" if "tensorrt" in e else "vllm" if "vllm" in e
                              else "transformers")
    engines = {e["id"]: e for e in doc["engines"]}
    best = evaluate(a.build, a.cases, doc, engine_of)
    print("start", best)
    for _ in range(a.rounds):
        for eid in a.engine or FREE:
            for key in FREE[eid]:
                for step in (1.3, 1 / 1.3):
                    cur = engines[eid][key]
                    lo, hi = BOUNDS[key]
                    new = min(hi, max(lo, cur * step if cur > 0 else (lo + hi) / 20))
                    engines[eid][key] = new
                    got = evaluate(a.build, a.cases, doc, engine_of)
                    if got[eid] < best[eid] - 1e-4:
                        best = got
                        print(eid, key, round(new, 4), round(100 * got[eid], 2), flush=True)
                    else:
                        engines[eid][key] = cur
    for eid in engines:
        for key in FREE.get(eid, []):
            engines[eid][key] = round(engines[eid][key], 4)
    print("final", {e: round(100 * v, 2) for e, v in best.items()})
    if a.write:
        DATA.write_text(json.dumps(doc, indent=2) + "\n")
    else:
        DATA.write_text(original)
        subprocess.run(["cmake", "--build", a.build, "-j", "2", "--target", "trainsim"],
                       stdout=subprocess.DEVNULL)
    print(json.dumps({e: {k: engines[e][k] for k in FREE.get(e, [])} for e in engines}, indent=1))


if __name__ == "__main__":
    main()
