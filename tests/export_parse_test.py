#!/usr/bin/env python3
"""`trainsim export`: every format parsed back by a real parser for it (json, tomllib, yaml,
shlex and `bash -n`), and the values it carries checked against the strategy `simulate --json`
reports for the same flags.

Usage: export_parse_test.py build/trainsim
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile
import tomllib

import yaml  # Debian python3-yaml

BIN = sys.argv[1]
FAILS = []

CASES = [
    ("dense", ["--model", "llama3.1-70b", "--gpus", "64", "--tp", "8", "--pp", "2", "--gbs", "128",
               "--seq", "8192", "--recompute", "full", "--dtype", "fp8"]),
    ("moe", ["--model", "deepseek-v3", "--hardware", "h800_sxm_80gb", "--gpus", "1024", "--tp", "2",
             "--pp", "16", "--ep", "64", "--etp", "1", "--gbs", "1024",
             "--first-pipeline-layers", "3", "--last-pipeline-layers", "2"]),
    ("lora_dpo", ["--model", "llama3-8b", "--gpus", "8", "--gbs", "64", "--mbs", "2", "--zero", "3",
                  "--stage", "dpo", "--method", "lora", "--lora-rank", "16"]),
]


def check(name, cond, detail=""):
    if cond:
        print(f"ok   {name}")
    else:
        print(f"FAIL {name} {detail}")
        FAILS.append(name)


def run(args):
    p = subprocess.run([BIN] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{args}: exit {p.returncode}: {p.stderr}")
    return p.stdout


def uncomment(text):
    return "\n".join(l for l in text.splitlines() if not l.startswith("#"))


def megatron_args(text):
    """--flag value pairs of a shell text (comments and continuations removed)."""
    words = shlex.split(uncomment(text).replace("\\\n", " "))
    out, key = {}, None
    for w in words:
        if w.startswith("--"):
            key = w
            out[key] = True
        elif key:
            out[key] = w if out[key] is True else out[key] + " " + w
    return out


def check_megatron(name, text, s):
    a = megatron_args(text)
    check(f"{name}: megatron tp", int(a["--tensor-model-parallel-size"]) == s["tp_size"])
    check(f"{name}: megatron pp", int(a.get("--pipeline-model-parallel-size", 1)) == s["pp_size"])
    check(f"{name}: megatron gbs", int(a["--global-batch-size"]) == s["global_batch_size"])
    check(f"{name}: megatron seq", int(a["--seq-length"]) == s["seq_len"])


def check_bridge(name, text, s):
    kv = {}
    for line in uncomment(text).splitlines():
        key, sep, value = line.partition("=")
        check(f"{name}: bridge line is key=value", sep == "=" and key.strip() == key, line)
        kv[key] = yaml.safe_load(value)  # OmegaConf values are YAML scalars and lists
    check(f"{name}: bridge tp", kv["model.tensor_model_parallel_size"] == s["tp_size"])
    check(f"{name}: bridge ep", kv["model.expert_model_parallel_size"] == s["ep_size"])
    check(f"{name}: bridge gbs", kv["train.global_batch_size"] == s["global_batch_size"])
    check(f"{name}: bridge recompute",
          kv["model.recompute_granularity"] == (None if s["recompute"] == "none" else s["recompute"]))


def check_deepspeed(name, text, s):
    j = json.loads(text)
    dp = s["dp"]
    check(f"{name}: deepspeed batch rule",
          j["train_batch_size"] == j["train_micro_batch_size_per_gpu"] * j["gradient_accumulation_steps"] * dp
          and j["train_batch_size"] == s["global_batch_size"])
    check(f"{name}: deepspeed zero", j["zero_optimization"]["stage"] == s["zero_state"])


def check_torchtitan(name, text, s):
    t = tomllib.loads(text)
    p = t["parallelism"]
    gpus = (p["data_parallel_replicate_degree"] * p["data_parallel_shard_degree"] *
            p["tensor_parallel_degree"] * p["pipeline_parallel_degree"] * p["context_parallel_degree"])
    check(f"{name}: torchtitan degrees multiply to the GPUs", gpus == s["world_size"], str(p))
    check(f"{name}: torchtitan global batch", t["training"]["global_batch_size"] == s["global_batch_size"])
    check(f"{name}: torchtitan seq", t["training"]["seq_len"] == s["seq_len"])
    mode = t["activation_checkpoint"]["mode"]
    check(f"{name}: torchtitan checkpointing", mode == s["recompute"] or mode == "selective", mode)


def check_llamafactory(name, text, s):
    y = yaml.safe_load(text)
    stage = {"pretrain": "pt", "sft": "sft", "dpo": "dpo", "kto": "kto", "rm": "rm"}[s["stage"]]
    check(f"{name}: llamafactory stage", y["stage"] == stage)
    check(f"{name}: llamafactory micro-batch", y["per_device_train_batch_size"] == s["micro_batch_size"])
    check(f"{name}: llamafactory accumulation", y["gradient_accumulation_steps"] == s["micro_batch_num"])
    if s["method"] == "lora":
        check(f"{name}: llamafactory lora rank", y["finetuning_type"] == "lora" and y["lora_rank"] == s["lora_rank"])
    else:
        check(f"{name}: llamafactory full", y["finetuning_type"] == s["method"])


def check_launch(name, fmt, text, s):
    p = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    check(f"{name}: {fmt} is valid bash", p.returncode == 0, p.stderr)
    a = megatron_args(text)
    check(f"{name}: {fmt} nodes x GPUs per node",
          int(str(a.get("--nnodes", 1)).split()[0]) * int(a["--nproc-per-node"].split()[0]) == s["world_size"])
    if fmt == "slurm":
        sb = {}
        for line in text.splitlines():
            if line.startswith("#SBATCH "):
                key, _, value = line[len("#SBATCH "):].partition("=")
                sb[key] = value
        check(f"{name}: slurm header", int(sb["--nodes"]) * int(sb["--gpus-per-node"]) == s["world_size"], str(sb))
    check_megatron(f"{name} ({fmt})", text, s)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in CASES:
            s = json.loads(run(["simulate", "--json"] + flags))["strategy"]
            for fmt in ["megatron", "bridge", "deepspeed", "torchtitan", "llamafactory", "torchrun", "slurm"]:
                text = run(["export", "--format", fmt] + flags)
                if fmt == "megatron":
                    check_megatron(name, text, s)
                elif fmt == "bridge":
                    check_bridge(name, text, s)
                elif fmt == "deepspeed":
                    check_deepspeed(name, text, s)
                elif fmt == "torchtitan":
                    check_torchtitan(name, text, s)
                elif fmt == "llamafactory":
                    check_llamafactory(name, text, s)
                else:
                    check_launch(name, fmt, text, s)
                if fmt == "megatron":  # --out writes what stdout shows
                    path = os.path.join(tmp, "args.txt")
                    run(["export", "--format", fmt, "--out", path] + flags)
                    with open(path) as f:
                        check(f"{name}: --out equals stdout", f.read() == text)
    print(f"export_parse_test: {len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
