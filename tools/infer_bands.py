#!/usr/bin/env python3
"""Held-out residuals of the inference cases and the 80 % band table of `trainsim infer`.

- TensorRT-LLM rows (inf_trtllm): leave-one-GPU-out, as tools/infer_heldout_gpu.py: the
  engine's keys fitted on the other GPUs' rows from that tool's hand-set start, the held-out
  GPU's rows scored with them (no by_hardware fit and no host factor of its own).
- vLLM / transformers rows (inf_qwen25, all on A100): leave-one-model-out: both engines' keys
  fitted without that model's rows (from the shipped values), its rows scored.
Each residual is the case's error with constants that never saw it. A regime's band (ENGINE/moe,
ENGINE/dense, moe, dense, all; kept with at least MIN_CASES residuals) is b = the 80th percentile of
|ln(measured / predicted)| (type-7 quantile, as `trainsim calibrate` builds
data/uncertainty.json); rel_below = 1 - e^-b, rel_above = e^b - 1. `trainsim infer` reports its
headline figures x e^-b .. e^b (docs/VALIDATION.md, "Inference band").
Usage: tools/infer_bands.py BUILD_DIR CASES.jsonl [--rounds 3] [--jobs 2] [--residuals F] [--write]
--write stores the table as "uncertainty" in data/inference_engines.json (rebuild to embed it).
"""
import argparse, concurrent.futures, datetime, json, math, os, pathlib, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "inference_engines.json"
sys.path.insert(0, str(ROOT / "tools"))
import infer_heldout_gpu  # noqa: E402  (its hand-set TensorRT-LLM start)

MIN_CASES = 15
COVERAGE = 0.80


def quantile(sorted_values, q):
    if not sorted_values:
        return 0.0
    h = (len(sorted_values) - 1) * q
    i = int(math.floor(h))
    if i + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[i] + (h - i) * (sorted_values[i + 1] - sorted_values[i])


def engine_of(case):
    e = case["engine"].lower()
    return "tensorrt-llm" if "tensorrt" in e else "vllm" if "vllm" in e else "transformers"


def fit_and_score(build, cases, start, engines, hold, ids, rounds, tag):
    """Fits `engines` without the cases `hold` names, returns {id: error} for `ids`."""
    dump = pathlib.Path(tempfile.gettempdir()) / f"infer_bands_{os.getpid()}_{tag}.json"
    cmd = [sys.executable, str(ROOT / "tools" / "fit_inference.py"), build, cases,
           "--rounds", str(rounds), "--start", start, "--hold-out", hold, "--dump", str(dump)]
    for e in engines:
        cmd += ["--engine", e]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    env = dict(os.environ, TRAINSIM_INFERENCE_ENGINES=str(dump))
    out = subprocess.run([f"{build}/trainsim", "validate", cases, "--json"], check=True,
                         capture_output=True, text=True, env=env).stdout
    return {c["id"]: c["error"] for c in json.loads(out)["cases"]
            if c["id"] in ids and not c.get("skipped")}


def band(name, errors):
    logs = sorted(abs(math.log(1 / (1 + e))) for e in errors)  # |ln(measured / predicted)|
    b = quantile(logs, COVERAGE)
    signed = sorted(errors)
    return {"regime": name, "cases": len(errors),
            "error_q10": round(quantile(signed, 0.10), 4),
            "error_q90": round(quantile(signed, 0.90), 4),
            "log_half_width": round(b, 4),
            "rel_below": round(max(0.01, 1 - math.exp(-b)), 4),
            "rel_above": round(max(0.01, math.expm1(b)), 4)}


def honest_check(rows, errors):
    """Coverage of each held-out group (a GPU of inf_trtllm, a model of inf_qwen25) by the band
    of its ENGINE/kind regime built from the other groups' residuals only."""
    def group(c):
        return c["hardware"] if engine_of(c) == "tensorrt-llm" else c["model"]["name"]

    def kind(c):
        return engine_of(c) + ("/moe" if c["model"].get("moe") else "/dense")

    scored = [c for c in rows if c["id"] in errors]
    inside = 0
    for c in scored:
        others = sorted(abs(math.log(1 / (1 + errors[o["id"]]))) for o in scored
                        if group(o) != group(c) and kind(o) == kind(c))
        inside += abs(math.log(1 / (1 + errors[c["id"]]))) <= quantile(others, COVERAGE)
    print(f"held-out coverage, each group against the band of the others: {inside} of "
          f"{len(scored)} ({100 * inside / max(1, len(scored)):.1f} %)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build"); ap.add_argument("cases")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--residuals", help="JSON file of the held-out errors by case id: read if it "
                    "exists (no refit), else written")
    a = ap.parse_args()
    rows = [json.loads(l) for l in open(a.cases) if l.strip()]
    # The TensorRT-LLM start: the hand-set values of tools/infer_heldout_gpu.py.
    doc = json.loads(DATA.read_text())
    for e in doc["engines"]:
        if e["id"] == "tensorrt-llm":
            e.update(infer_heldout_gpu.START)
    for c in doc.get("host_cpus", []):
        c["host_time_factor"] = infer_heldout_gpu.START_HOST_TIME_FACTOR
    start = pathlib.Path(tempfile.gettempdir()) / f"infer_bands_start_{os.getpid()}.json"
    start.write_text(json.dumps(doc, indent=2) + "\n")
    jobs = []  # (engines, hold-out, ids scored, tag, start)
    for g in sorted({c["hardware"] for c in rows if engine_of(c) == "tensorrt-llm"}):
        ids = {c["id"] for c in rows if engine_of(c) == "tensorrt-llm" and c["hardware"] == g}
        jobs.append((["tensorrt-llm"], f"hardware={g}", ids, g, str(start)))
    qwen = [c for c in rows if engine_of(c) != "tensorrt-llm"]
    for name in sorted({c["model"]["name"] for c in qwen}):
        ids = {c["id"] for c in qwen if c["model"]["name"] == name}
        # The model object's text names it as 'name': 'X' (fit_inference matches substrings).
        jobs.append((["vllm", "transformers"], f"model='name': '{name}'", ids, name, str(DATA)))
    errors = {}
    if a.residuals and pathlib.Path(a.residuals).exists():  # reuse a run's held-out residuals
        errors = json.loads(pathlib.Path(a.residuals).read_text())
        jobs = []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futs = {pool.submit(fit_and_score, a.build, a.cases, st, eng, hold, ids, a.rounds, tag): tag
                for eng, hold, ids, tag, st in jobs}
        for f in concurrent.futures.as_completed(futs):
            got = f.result()
            errors.update(got)
            mape = 100 * sum(abs(e) for e in got.values()) / max(1, len(got))
            print(f"{futs[f]:32s} n={len(got):4d} held-out MAPE {mape:6.2f} %", flush=True)
    if a.residuals:
        pathlib.Path(a.residuals).write_text(json.dumps(errors, indent=0) + "\n")
    groups = {}
    for c in rows:
        if c["id"] not in errors:
            continue
        eng, moe = engine_of(c), "moe" if c["model"].get("moe") else "dense"
        for name in (f"{eng}/{moe}", moe, "all"):
            groups.setdefault(name, []).append(errors[c["id"]])
    regimes = [band(n, v) for n, v in sorted(groups.items()) if len(v) >= MIN_CASES]
    honest_check(rows, errors)
    for r in regimes:
        print(f"{r['regime']:22s} n={r['cases']:4d} -{100 * r['rel_below']:.1f} % / "
              f"+{100 * r['rel_above']:.1f} %")
    table = {
        "about": "80 % bands of `trainsim infer` (include/trainsim/infer.h InferenceBand, "
                 "docs/VALIDATION.md 'Inference band'): b = 80th percentile of |ln(measured / "
                 "predicted)| over the held-out cases of a regime (TensorRT-LLM rows: "
                 "leave-one-GPU-out; vLLM / transformers rows: leave-one-model-out); the report "
                 "gives value x (1 - rel_below) .. x (1 + rel_above) for throughput (latencies the "
                 "reciprocal), from the most specific regime: ENGINE/moe or ENGINE/dense, then "
                 "moe or dense (every engine's residuals), then all. error_q10 / error_q90: signed (predicted - measured) / measured quantiles.",
        "generated_by": "python3 tools/infer_bands.py build " + a.cases.replace(str(ROOT.parent), "..")
                        + f" --rounds {a.rounds} --write",
        "date": datetime.date.today().isoformat(),
        "min_cases": MIN_CASES,
        "coverage": COVERAGE,
        "regimes": regimes,
    }
    if a.write:
        doc = json.loads(DATA.read_text())
        doc["uncertainty"] = table
        DATA.write_text(json.dumps(doc, indent=2) + "\n")
    else:
        print(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()
