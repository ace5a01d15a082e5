#!/usr/bin/env python3
"""Leave-one-GPU-out score of the TensorRT-LLM inference constants (docs/INFERENCE.md).

For each GPU of the inf_trtllm family: fit the tensorrt-llm profile's calibrated keys on the
other GPUs' rows (tools/fit_inference.py --hold-out hardware=GPU, from the hand-set start
values below, not from the shipped fit), score that GPU's rows with it (the held-out GPU takes
the MoE fit of a preset with the same GPU die, gpu_dies in data/inference_engines.json). Prints the held-out
MAPE per GPU and weighted over all rows, and the in-sample MAPE of a fit from the same start.
Usage: tools/infer_heldout_gpu.py BUILD_DIR CASES.jsonl [--rounds 3]
"""
import argparse, json, pathlib, re, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Hand-set start (docs/INFERENCE.md, "Validation"): GEMMs at 0.6 of peak, HBM 0.8 / 0.8,
# 4 us per kernel, 0.5 ms + 20 us per sequence of host work (MoE expert reads at HBM 0.8 too).
START = {"gemm_efficiency": 0.6, "decode_hbm_fraction": 0.8, "attention_hbm_fraction": 0.8,
         "kernel_latency_us": 4.0, "step_overhead_us": 500.0, "seq_overhead_us": 20.0,
         "moe_hbm_fraction": 0.8, "moe_gemm_efficiency": 0.6}
# Host CPUs start as fast as the x86 reference (factor 1): a held-out GPU whose CPU kind no other
# GPU shares (GB200's Grace) is scored with that neutral value, not with one fitted on its rows.
START_HOST_TIME_FACTOR = 1.0


def fit(build, cases, start, hold=None, rounds=3):
    cmd = [sys.executable, str(ROOT / "tools" / "fit_inference.py"), build, cases, "--engine",
           "tensorrt-llm", "--rounds", str(rounds), "--start", start]
    if hold:
        cmd += ["--hold-out", f"hardware={hold}"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    final = next(l for l in out.splitlines() if l.startswith("final"))
    return eval(final[len("final "):])  # {"tensorrt-llm": x, "held-out": y}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build"); ap.add_argument("cases")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    doc = json.loads((ROOT / "data" / "inference_engines.json").read_text())
    for e in doc["engines"]:
        if e["id"] == "tensorrt-llm":
            e.update(START)
    for c in doc.get("host_cpus", []):
        c["host_time_factor"] = START_HOST_TIME_FACTOR
    start = pathlib.Path(tempfile.gettempdir()) / "infer_heldout_start.json"
    start.write_text(json.dumps(doc, indent=2) + "\n")
    gpus = {}
    for line in open(a.cases):
        c = json.loads(line)
        if c["id"].startswith("inf_trtllm"):
            gpus[c["hardware"]] = gpus.get(c["hardware"], 0) + 1
    total = 0.0
    for g, n in sorted(gpus.items()):
        r = fit(a.build, a.cases, str(start), g, a.rounds)
        print(f"{g:22s} n={n:4d} held-out {r['held-out']:6.2f} %  (fit on the rest {r['tensorrt-llm']:.2f} %)",
              flush=True)
        total += n * r["held-out"]
    print(f"held out per GPU, weighted: {total / sum(gpus.values()):.2f} %")
    print(f"in-sample from the same start: {fit(a.build, a.cases, str(start), None, a.rounds)['tensorrt-llm']:.2f} %")


if __name__ == "__main__":
    main()
