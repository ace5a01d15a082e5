#!/usr/bin/env python3
"""Fits the calibrated keys of data/inference_engines.json on the inference validation cases.

Coordinate descent over each engine's free keys, minimising the MAPE of that engine's cases
(`trainsim validate --json` with TRAINSIM_INFERENCE_ENGINES pointing at the candidate file, so
no rebuild per evaluation; --write stores the result in data/inference_engines.json, which the
next build embeds).
Usage: tools/fit_inference.py BUILD_DIR CASES.jsonl [--engine ID] [--rounds N] [--write]
Prints the fitted values and the in-sample MAPE per engine; --write stores them in the JSON.
"""
import argparse, json, os, pathlib, subprocess, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "inference_engines.json"
FREE = {  # key: (min, max, multiplicative steps tried)
    "tensorrt-llm": ["gemm_efficiency", "decode_hbm_fraction", "kernel_latency_us", "step_overhead_us",
                     "seq_overhead_us", "attention_hbm_fraction", "moe_hbm_fraction", "moe_gemm_efficiency",
                     "host_cpus.grace"],
    "vllm": ["step_overhead_us", "kernel_latency_us", "decode_hbm_fraction", "gptq4_gemm_overhead_us",
             "gptq8_gemm_overhead_us", "awq_gemm_overhead_us", "gemm_efficiency"],
    "transformers": ["layer_overhead_us", "step_overhead_us", "decode_hbm_fraction",
                     "gptq4_gemm_overhead_us", "gptq8_gemm_overhead_us", "awq_gemm_overhead_us",
                     "gemm_efficiency"],
}
# Second phase, after the shared keys: an engine's keys fitted per hardware preset (its own
# rows), where they differ by GPU (the MoE kernels); a preset without rows in the fit (held out,
# or not in the case set) keeps borrowing the shared value, fitted on every GPU's rows.
PER_HARDWARE = {
    "tensorrt-llm": [f"by_hardware.{hw}.{k}"
                     for hw in ("b200_sxm_180gb", "gb200_nvl72", "h100_sxm_80gb",
                                "h200_sxm_141gb", "rtx_pro_6000_96gb")
                     for k in ("moe_gemm_efficiency", "moe_hbm_fraction")],
}
BOUNDS = {"gemm_efficiency": (0.2, 0.85), "seq_overhead_us": (0.0, 200.0), "decode_hbm_fraction": (0.3, 0.95), "attention_hbm_fraction": (0.3, 0.95),
          "moe_hbm_fraction": (0.1, 0.95), "moe_gemm_efficiency": (0.1, 0.85),
          "host_cpus.grace": (1.0, 4.0),
          "kernel_latency_us": (0.0, 30.0), "step_overhead_us": (0.0, 20000.0),
          "layer_overhead_us": (0.0, 3000.0), "gptq4_gemm_overhead_us": (0.0, 500.0),
          "gptq8_gemm_overhead_us": (0.0, 500.0),
          "awq_gemm_overhead_us": (0.0, 500.0)}


def get(doc, engines, eid, key):
    """A free key's value: an engine's key, `host_cpus.CPU` (that host CPU's factor on the
    engines' host work, shared by every engine, fitted on the engine that has its rows) or
    `by_hardware.HW.KEY` (the engine's KEY fitted for one hardware preset; absent: the shared)."""
    if key.startswith("host_cpus."):
        cpu = key.split(".", 1)[1]
        return next(c for c in doc["host_cpus"] if c["cpu"] == cpu)["host_time_factor"]
    if key.startswith("by_hardware."):
        _, hw, k = key.split(".", 2)
        return engines[eid].get("by_hardware", {}).get(hw, {}).get(k, engines[eid][k])
    return engines[eid][key]


def put(doc, engines, eid, key, value, keep=True):
    """Sets a free key; keep=False drops a by_hardware key that was absent before (a rejected
    step on a hardware whose rows are held out leaves it borrowing the shared value)."""
    if key.startswith("host_cpus."):
        cpu = key.split(".", 1)[1]
        next(c for c in doc["host_cpus"] if c["cpu"] == cpu)["host_time_factor"] = value
    elif key.startswith("by_hardware."):
        _, hw, k = key.split(".", 2)
        per = engines[eid].setdefault("by_hardware", {}).setdefault(hw, {})
        if keep:
            per[k] = value
        else:
            per.pop(k, None)
            if not per:
                del engines[eid]["by_hardware"][hw]
    else:
        engines[eid][key] = value


def has(engines, eid, key):
    if key.startswith("by_hardware."):
        _, hw, k = key.split(".", 2)
        return k in engines[eid].get("by_hardware", {}).get(hw, {})
    return True


def evaluate(build, cases, doc, engine_of, held=frozenset()):
    """MAPE per engine on the fitted cases, plus "held-out" over the ids in `held`."""
    tmp = pathlib.Path(tempfile.gettempdir()) / f"fit_inference_{os.getpid()}.json"
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    env = dict(os.environ, TRAINSIM_INFERENCE_ENGINES=str(tmp))
    out = subprocess.run([f"{build}/trainsim", "validate", cases, "--json"], check=True,
                         capture_output=True, text=True, env=env).stdout
    errs = {}
    for c in json.loads(out)["cases"]:
        if c.get("skipped"):
            continue
        key = "held-out" if c["id"] in held else engine_of[c["id"]]
        errs.setdefault(key, []).append(abs(c["error"]))
    return {e: sum(v) / len(v) for e, v in errs.items()}


def held_ids(cases, specs):
    """Ids of the cases a --hold-out FIELD=VALUE (substring of that top-level field) names."""
    ids = set()
    for line in open(cases):
        c = json.loads(line)
        for spec in specs or []:
            field, value = spec.split("=", 1)
            if value.lower() in str(c.get(field, "")).lower():
                ids.add(c["id"])
    return frozenset(ids)


def descend(a, doc, engines, engine_of, held, best, keys):
    """Coordinate descent over `keys` (engine -> free keys), a.rounds rounds."""
    for _ in range(a.rounds):
        for eid in a.engine or FREE:
            if eid not in best:
                continue
            for key in keys.get(eid, []):
                for step in (1.3, 1 / 1.3, 1.1, 1 / 1.1):
                    while True:  # keep stepping while it helps
                        cur = get(doc, engines, eid, key)
                        existed = has(engines, eid, key)
                        lo, hi = BOUNDS.get(key) or BOUNDS[key.split(".")[-1]]
                        new = min(hi, max(lo, cur * step if cur > 0 else (lo + hi) / 20))
                        put(doc, engines, eid, key, new)
                        got = evaluate(a.build, a.cases, doc, engine_of, held)
                        if new != cur and got[eid] < best[eid] - 1e-4:
                            best = got
                            print(eid, key, round(new, 4), round(100 * got[eid], 2), flush=True)
                        else:
                            put(doc, engines, eid, key, cur, existed)
                            break
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build"); ap.add_argument("cases")
    ap.add_argument("--engine", action="append"); ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--hold-out", action="append",
                    help="FIELD=VALUE: leave these cases out of the fit and score them apart "
                         "(e.g. hardware=gb200, id=inf_qwen25)")
    ap.add_argument("--start", help="engine file to start from (default: data/inference_engines.json)")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--dump", help="write the fitted engine file here (not into data/)")
    ap.add_argument("--shared-only", action="store_true",
                    help="fit only the shared keys (no by_hardware phase)")
    a = ap.parse_args()
    doc = json.loads(pathlib.Path(a.start).read_text() if a.start else DATA.read_text())
    engine_of = {}
    for line in open(a.cases):
        c = json.loads(line)
        e = c["engine"].lower()
        engine_of[c["id"]] = ("tensorrt-llm" if "tensorrt" in e else "vllm" if "vllm" in e
                              else "transformers")
    held = held_ids(a.cases, a.hold_out)
    engines = {e["id"]: e for e in doc["engines"]}
    best = evaluate(a.build, a.cases, doc, engine_of, held)
    print("start", {e: round(100 * v, 2) for e, v in best.items()})
    if not a.shared_only:  # the shared keys are fitted on every GPU's rows, then refit per GPU
        for eid in a.engine or FREE:
            engines.get(eid, {}).pop("by_hardware", None)
        best = evaluate(a.build, a.cases, doc, engine_of, held)
    for phase in (FREE, {} if a.shared_only else PER_HARDWARE):
        best = descend(a, doc, engines, engine_of, held, best, phase)
    for eid in engines:
        for key in FREE.get(eid, []) + PER_HARDWARE.get(eid, []):
            if has(engines, eid, key):
                put(doc, engines, eid, key, round(get(doc, engines, eid, key), 4))
    print("final", {e: round(100 * v, 2) for e, v in best.items()})
    if a.write:
        DATA.write_text(json.dumps(doc, indent=2) + "\n")
    if a.dump:
        pathlib.Path(a.dump).write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps({e: {k: get(doc, engines, e, k) for k in FREE.get(e, []) + PER_HARDWARE.get(e, [])
                          if has(engines, e, k)} for e in engines},
                     indent=1))


if __name__ == "__main__":
    main()
