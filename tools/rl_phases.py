#!/usr/bin/env python3
"""Per-phase check of the RL validation cases: trainsim's predicted phases against the phase
times the sources publish (the case notes' "Phase columns as published: gen=..; ...").

  python3 tools/rl_phases.py [build/trainsim] [../shared/validation/cases/rl.jsonl]

Published verl columns map onto trainsim's phases as: gen -> generation; old_log_prob + ref ->
scoring; update_actor -> training. In verl's fully-async rows (separate pools) "gen" is the
trainer's wait for samples, not the rollout's duration: it is printed beside trainsim's exposed
generation, max(0, generation - scoring - training).

Two checks that use only the published numbers and the hardware's datasheet:
  rest   = step - the published phases (verl's step also holds rewards, advantages and Ray
           transfers: ~4 s async, ~11 s colocated where the columns are self-consistent; a
           negative rest means the columns do not add up to the step);
  maxlen = the largest mean sample (prompt + response tokens) the published update_actor
           allows at 100 % of the GPU's dense BF16 peak: update_actor x training GPUs x peak /
           (k x active parameters x trained samples), k = 8 under full recompute (forward,
           recomputed forward, backward), else 6; attention ignored, so a strict upper bound.
           Compare it with the sample length trainsim assumes ("assumed").
A row that publishes no update_actor but the actor's MFU (verl docs/perf/dpsk.md: "MFU 0.19")
gets the update_actor that MFU implies, marked "~": verl's perf/mfu/actor is the actor update's
6 x active parameters per trained token (attention left out here, so a lower bound) over the
update time x GPUs x the GPU's promised BF16 peak; trained tokens = samples x the sample length
trainsim runs ("assumed").
"""
import json
import os
import re
import subprocess
import sys

PHASES = ("generation", "scoring", "training", "weight_sync")


def published(notes):
    m = re.search(r"Phase columns as published: (.*?)\. ", notes + " ")
    if not m:  # verl docs/perf/dpsk.md publishes the rollout time alone
        r = re.search(r"Published:[^.]*rollout time ([0-9.]+) s", notes)
        return {"gen": float(r.group(1))} if r else None
    return {k.strip(): float(v) for k, v in re.findall(r"([a-z_ ]+)=([0-9.]+)", m.group(1))}


def published_mfu(notes):
    m = re.search(r"Published:[^.]*\bMFU ([0-9.]+)", notes)
    return float(m.group(1)) if m else None


def explain(binary, cases, case_id):
    text = subprocess.run([binary, "validate", cases, "--explain", case_id],
                          capture_output=True, text=True).stdout
    out = {}
    for name in PHASES:
        m = re.search(r"phase " + name + r"\s+([0-9.]+)", text)
        out[name] = float(m.group(1)) if m else float("nan")
    m = re.search(r"step time\s+([0-9.]+)", text)
    out["step"] = float(m.group(1)) if m else float("nan")
    m = re.search(r"params [0-9.]+ B total, ([0-9.]+) B active", text)
    out["active"] = float(m.group(1)) * 1e9 if m else float("nan")
    m = re.search(r"strategy tp (\d+) pp (\d+) vpp \d+ cp (\d+) .*?dp (\d+)", text)
    out["train_gpus"] = 1
    for g in (m.groups() if m else ()):
        out["train_gpus"] *= int(g)
    out["recompute"] = "recompute full" in text
    return out


def sample_lengths(binary, cases, rows):
    """Mean prompt + response tokens per case as trainsim runs it (given or assumed)."""
    text = subprocess.run([binary, "validate", cases, "--json"], capture_output=True,
                          text=True).stdout
    assumed = {c["id"]: {a["field"]: a["value"] for a in c.get("assumed", [])}
               for c in json.loads(text)["cases"]}
    out = {}
    for c in rows:
        a, rl = assumed.get(c["id"], {}), c.get("rl") or {}
        prompt = float(a.get("prompt_len", rl.get("prompt_len") or 256))
        resp = a.get("response_len", rl.get("mean_response_len"))
        if resp is None and rl.get("mean_seq_len"):
            resp = rl["mean_seq_len"] - prompt
        out[c["id"]] = prompt + float(resp) if resp is not None else float("nan")
    return out


def peak_bf16(hw_id, root):
    path = os.path.join(root, "data", "hardware", hw_id + ".json")
    try:
        return json.load(open(path))["peak_tflops"]["bf16"] * 1e12
    except (OSError, KeyError):
        return float("nan")


def err(p, t):
    return "%+5.0f%%" % (100 * (p / t - 1)) if t > 0 else "    -"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/trainsim"
    cases = sys.argv[2] if len(sys.argv) > 2 else "../shared/validation/cases/rl.jsonl"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = [json.loads(l) for l in open(cases) if l.strip()]
    lengths = sample_lengths(binary, cases, rows)
    print("%-9s %-3s %16s %16s %16s %16s %6s %7s %7s" %
          ("case", "", "gen|wait p/pub", "scoring p/pub", "training p/pub", "step p/pub",
           "rest", "maxlen", "assumed"))
    for c in rows:
        pub = published(c.get("notes", ""))
        if not pub:
            continue
        rl = c.get("rl") or {}
        sep = rl.get("rollout") == "separate"
        p = explain(binary, cases, c["id"])
        gen = max(0.0, p["generation"] - p["scoring"] - p["training"]) if sep else p["generation"]
        score = pub.get("old_log_prob", 0.0) + pub.get("ref", 0.0)
        actor = pub.get("update_actor", 0.0)
        samples = rl.get("samples_per_step") or c.get("gbs") or 0
        mfu, derived = published_mfu(c.get("notes", "")), False
        if not actor and mfu and samples:
            gpus = rl.get("actor_gpus") or c.get("gpus") or 0
            actor = 6 * p["active"] * samples * lengths[c["id"]] / (
                mfu * gpus * peak_bf16(c["hardware"], root))
            derived = True
        rest = c["target_iter_time_s"] - pub.get("gen", 0.0) - score - actor
        k = 8 if p["recompute"] else 6
        maxlen = actor * p["train_gpus"] * peak_bf16(c["hardware"], root) / (
            k * p["active"] * samples) if samples and actor and not derived else float("nan")
        cols = [(gen, pub.get("gen", 0.0)), (p["scoring"], score), (p["training"], actor),
                (p["step"], c["target_iter_time_s"])]
        tag = ("sep" if sep else "col") + ("~" if derived else "")
        print("%-9s %-4s" % (c["id"].replace("rl_", ""), tag) +
              " ".join("%5.0f|%4.0f%s" % (a, b, err(a, b)) for a, b in cols) +
              " %6.0f %7.0f %7.0f" % (rest, maxlen, lengths[c["id"]]))


if __name__ == "__main__":
    main()
