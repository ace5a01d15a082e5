#!/usr/bin/env bash
# End-to-end checks of the trainsim command line: the happy paths print what they promise, and
# every bad input exits with code 2 and one line on stderr that names the field.
# Usage: tests/cli_test.sh path/to/trainsim
set -u

BIN=${1:?usage: cli_test.sh path/to/trainsim}
SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
SHARED=${TRAINSIM_SHARED_DIR:-$SCRIPT_DIR/../../shared}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

PASS=0
FAIL=0
FAILED=()

ok() {
  PASS=$((PASS + 1))
  echo "ok   - $1"
}

bad() {
  FAIL=$((FAIL + 1))
  FAILED+=("$1")
  echo "FAIL - $1"
  shift
  for line in "$@"; do echo "       $line"; done
}

# run NAME ARGS...: runs the binary; sets RC, OUT, ERR (stdout and stderr in files).
run() {
  local name=$1
  shift
  OUT="$TMP/$name.out"
  ERR="$TMP/$name.err"
  "$BIN" "$@" >"$OUT" 2>"$ERR"
  RC=$?
}

# expect_ok NAME ARGS...: exit code 0.
expect_ok() {
  local name=$1
  run "$@"
  if [ "$RC" -eq 0 ]; then
    ok "$name: exit 0"
    return 0
  fi
  bad "$name: exit 0" "got exit $RC" "stderr: $(head -c 400 "$ERR")"
  return 1
}

# expect_field_error NAME FIELD ARGS...: exit code 2 and exactly one stderr line naming FIELD.
expect_field_error() {
  local name=$1 field=$2
  shift 2
  run "$name" "$@"
  local lines
  lines=$(wc -l <"$ERR")
  if [ "$RC" -ne 2 ]; then
    bad "$name: exit 2" "got exit $RC" "stderr: $(head -c 400 "$ERR")"
  elif [ "$lines" -ne 1 ]; then
    bad "$name: one line on stderr" "got $lines lines:" "$(head -c 600 "$ERR")"
  elif ! grep -qF -- "$field" "$ERR"; then
    bad "$name: stderr names '$field'" "stderr: $(cat "$ERR")"
  else
    ok "$name: exit 2, one line naming '$field': $(cat "$ERR")"
  fi
}

if [ ! -x "$BIN" ]; then
  echo "cli_test: $BIN is not an executable" >&2
  exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "cli_test: python3 is needed to check the JSON output" >&2
  exit 1
fi

# --- simulate with defaults ----------------------------------------------------------------------
if expect_ok "simulate defaults" simulate; then
  if grep -q "step time" "$OUT"; then
    ok "simulate defaults: prints 'step time'"
  else
    bad "simulate defaults: prints 'step time'" "stdout: $(head -c 400 "$OUT")"
  fi
  if [ -s "$ERR" ]; then
    bad "simulate defaults: nothing on stderr" "stderr: $(head -c 400 "$ERR")"
  else
    ok "simulate defaults: nothing on stderr"
  fi
fi

# --- simulate --json -------------------------------------------------------------------------------
JSON_CHECK='
import json, math, sys
d = json.load(sys.stdin)
for k in ("step_time_s", "mfu", "hfu", "tokens_per_s_per_gpu", "tflops_per_gpu", "params_total",
          "params_active"):
    assert k in d, "missing key " + k
    assert isinstance(d[k], (int, float)) and math.isfinite(d[k]), k + " is not a finite number"
assert d["step_time_s"] > 0, "step_time_s must be > 0"
assert 0 < d["mfu"] <= d["hfu"] <= 1, "need 0 < mfu <= hfu <= 1, got %r %r" % (d["mfu"], d["hfu"])
assert d["tokens_per_s_per_gpu"] > 0 and d["tflops_per_gpu"] > 0
assert d["params_total"] >= d["params_active"] > 0
stages = d["stages"]
assert isinstance(stages, list) and len(stages) >= 1, "stages must be a non-empty list"
for s in stages:
    assert "peak_mem_bytes" in s, "a stage without peak_mem_bytes"
    assert s["peak_mem_bytes"] > 0, "peak_mem_bytes must be > 0"
'
if expect_ok "simulate --json" simulate --json; then
  if msg=$(python3 -c "$JSON_CHECK" <"$OUT" 2>&1); then
    ok "simulate --json: parses, has step_time_s, mfu, hfu, tokens_per_s_per_gpu, tflops_per_gpu, params_total, params_active, stages[*].peak_mem_bytes"
  else
    bad "simulate --json: content" "$msg"
  fi
  # Llama-3-8B has 8,030,261,248 parameters.
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["params_total"] == 8030261248, d["params_total"]' <"$OUT" 2>/dev/null; then
    ok "simulate --json: llama3-8b params_total = 8030261248"
  else
    bad "simulate --json: llama3-8b params_total = 8030261248" "$(head -c 300 "$OUT")"
  fi
fi

# Pipeline parallel: one stage entry per stage.
if expect_ok "simulate --json --pp 4" simulate --json --gpus 16 --tp 2 --pp 4; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["stages"]) == 4, len(d["stages"]); assert all(s["peak_mem_bytes"] > 0 for s in d["stages"])' <"$OUT" 2>/dev/null; then
    ok "simulate --json --pp 4: 4 stages with peak_mem_bytes"
  else
    bad "simulate --json --pp 4: 4 stages with peak_mem_bytes" "$(head -c 300 "$OUT")"
  fi
fi

# --- bad inputs: exit 2, one line naming the field -------------------------------------------------
expect_field_error "gpus 12 tp 8" world_size simulate --gpus 12 --tp 8
expect_field_error "tp 3 on llama3-8b (24 gpus)" "tp:" simulate --model llama3-8b --gpus 24 --tp 3
expect_field_error "tp 3 on llama3-8b (8 gpus)" world_size simulate --model llama3-8b --tp 3
expect_field_error "missing model file" /nonexistent.json simulate --model /nonexistent.json
expect_field_error "unknown model preset" llama3-8b simulate --model no-such-model

# export (docs/EXPORT.md): bad flags are one line and exit 2.
expect_field_error "export unknown format" "format" export --format nemo
expect_field_error "export without format" "format" export --gpus 8
expect_field_error "export bad strategy" "tp:" export --format megatron --model llama3-8b --gpus 24 --tp 3
expect_field_error "export gpus-per-node not dividing" gpus-per-node export --format slurm --gpus 64 --tp 8 --gpus-per-node 6
expect_field_error "export llamafactory method without a finetuning_type" method export --format llamafactory --gpus 1 --gbs 8 --stage sft --method ia3
expect_field_error "export search without gbs" gbs export --format megatron --search --gpus 8
expect_field_error "export search with a fine-tuning method" search export --format megatron --search --gpus 8 --gbs 32 --method lora
expect_field_error "export unwritable out" out export --format megatron --out /nonexistent/dir/args.txt
if expect_ok "export search best as megatron" export --format megatron --search --model llama3-8b --gpus 8 --gbs 32 --seq 4096 --threads 2; then
  if grep -q "^--tensor-model-parallel-size" "$OUT" && grep -q "best of" "$ERR"; then
    ok "export search: Megatron-LM arguments of the best strategy"
  else
    bad "export search: Megatron-LM arguments of the best strategy" "$(head -c 300 "$OUT")"
  fi
fi
if expect_ok "export deepspeed with tp" export --format deepspeed --gpus 8 --tp 2 --gbs 16; then
  if grep -q "not expressed in the DeepSpeed config: tp_size 2" "$ERR"; then
    ok "export deepspeed: what JSON cannot say goes to stderr"
  else
    bad "export deepspeed: what JSON cannot say goes to stderr" "$(cat "$ERR")"
  fi
fi

printf '{"model_type": "llama", "hidden_size": 4096,, "num_hidden_layers": 32}\n' >"$TMP/malformed.json"
expect_field_error "malformed model JSON" "$TMP/malformed.json" simulate --model "$TMP/malformed.json"
run "malformed model JSON says malformed" simulate --model "$TMP/malformed.json"
if grep -qi "malformed" "$ERR"; then
  ok "malformed model JSON: the message says it is malformed"
else
  bad "malformed model JSON: the message says it is malformed" "stderr: $(cat "$ERR")"
fi

printf '{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 1e309}\n' >"$TMP/overflow.json"
expect_field_error "model JSON with 1e309" "$TMP/overflow.json" simulate --model "$TMP/overflow.json"

printf '{"model_type": "llama", "hidden_size": "4096", "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 128256}\n' >"$TMP/wrongtype.json"
expect_field_error "model JSON with a string size" hidden_size simulate --model "$TMP/wrongtype.json"

printf '{"seq_len": 4096, "micro_batch_size": 1, "micro_batch_num": 8, "world_size": 8, "tp_size": 1, "tensor_parallel": 2}\n' >"$TMP/unknown_key.json"
expect_field_error "strategy with an unknown key" tensor_parallel simulate --strategy "$TMP/unknown_key.json"
expect_field_error "missing strategy file" "$TMP/none.json" simulate --strategy "$TMP/none.json"

expect_field_error "mbs 0" mbs simulate --mbs 0
expect_field_error "gbs 30 with 8 gpus, mbs 4" gbs simulate --gbs 30 --gpus 8 --mbs 4
expect_field_error "vpp 2 with pp 1" vpp simulate --vpp 2 --pp 1
expect_field_error "ep 3 on mixtral-8x7b" "ep:" simulate --model mixtral-8x7b --ep 3
expect_field_error "tp*pp overflowing int" world_size simulate --tp 65536 --pp 65536
expect_field_error "unknown hardware" h100_sxm_80gb simulate --hardware no-such-gpu
expect_field_error "hw-override unknown key" nic_gbps simulate --hw-override '{"nic_gbps": 200}'
expect_field_error "hw-override zero" hbm_gib simulate --hw-override '{"hbm_gib": 0}'
expect_field_error "bad recompute" recompute simulate --recompute sometimes
expect_field_error "bad dtype" dtype simulate --dtype int3
expect_field_error "megatron args bad value" --tensor-model-parallel-size simulate --from-megatron-args "--tensor-model-parallel-size eight"
# Integers are decimal: CLI11 alone reads 010 as octal 8 and 0x10 as 16.
expect_field_error "gpus 010 is not octal 8" --gpus simulate --gpus 010
expect_field_error "gpus 0x10 is not hex" --gpus simulate --gpus 0x10
expect_field_error "search gpus 010" --gpus search --model llama3-8b --gpus 010 --gbs 64
expect_field_error "sweep gpus 8,010" --gpus sweep --model llama3-8b --gpus 8,010 --gbs 32
expect_ok "gpus 16 decimal" simulate --gpus 16 --tp 2

# --- list ------------------------------------------------------------------------------------------
if expect_ok "list models" list models; then
  if grep -q "^llama3-8b " "$OUT"; then ok "list models: lists llama3-8b"; else bad "list models: lists llama3-8b" "$(head -c 400 "$OUT")"; fi
  if grep -q "error" "$OUT"; then bad "list models: no preset fails to load" "$(grep error "$OUT")"; else ok "list models: no preset fails to load"; fi
fi
if expect_ok "list hardware" list hardware; then
  if grep -q "^h100_sxm_80gb " "$OUT"; then ok "list hardware: lists h100_sxm_80gb"; else bad "list hardware: lists h100_sxm_80gb" "$(head -c 400 "$OUT")"; fi
  if grep -q "error" "$OUT"; then bad "list hardware: no preset fails to load" "$(grep error "$OUT")"; else ok "list hardware: no preset fails to load"; fi
fi
# The hardware catalogue: >= 60 profiles with source, date, calibration status and prices.
if expect_ok "list hardware --json" list hardware --json; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d) >= 60, "only %d profiles" % len(d)
by = {p["id"]: p for p in d}
for p in d:
    for k in ("source", "source_date", "calibrated", "calibration", "price_usd_per_gpu_hour",
              "price_source", "price_date", "price_reserved_usd_per_gpu_hour", "sources"):
        assert k in p, p["id"] + ": missing " + k
assert by["h100_sxm_80gb"]["calibrated"] is True
assert by["h200_sxm_141gb"]["calibrated"] is False and by["h200_sxm_141gb"]["efficiency_from"] == "h100_sxm_80gb"
assert by["tpu_v5p"]["calibration"].startswith("uncalibrated")
' <"$OUT" 2>&1); then ok "list hardware --json: 60+ profiles with source, date, calibration, prices"; else bad "list hardware --json: content" "$msg"; fi
fi
# Uncalibrated hardware is marked in the text and JSON reports (issue 13).
if expect_ok "simulate uncalibrated" simulate --model llama3-8b --hardware h200_sxm_141gb --gpus 8 --json; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["hardware_calibrated"] is False and d["uncertainty"]["uncalibrated_hardware"] is True' <"$OUT" 2>/dev/null; then
    ok "simulate --json: h200 marked uncalibrated"
  else bad "simulate --json: h200 marked uncalibrated" "$(head -c 400 "$OUT")"; fi
fi
if expect_ok "simulate uncalibrated text" simulate --model llama3-8b --hardware tpu_v5p --gpus 8; then
  if grep -q "UNCALIBRATED hardware" "$OUT"; then ok "simulate: tpu_v5p text says UNCALIBRATED"; else bad "simulate: tpu_v5p text says UNCALIBRATED" "$(head -c 400 "$OUT")"; fi
fi
if expect_ok "simulate calibrated text" simulate --model llama3-8b --hardware h100_sxm_80gb --gpus 8; then
  if grep -q "UNCALIBRATED" "$OUT"; then bad "simulate: h100 text is not marked" "$(head -c 400 "$OUT")"; else ok "simulate: calibrated h100 text carries no UNCALIBRATED mark"; fi
fi

run "list nothing" list gpus
if [ "$RC" -ne 0 ]; then ok "list gpus: rejected (exit $RC)"; else bad "list gpus: rejected" "exit 0"; fi

# --- --strategy with a SimuMax strategy file -------------------------------------------------------
cat >"$TMP/simumax_strategy.json" <<'EOF'
{
  "seq_len": 4096,
  "micro_batch_size": 1,
  "micro_batch_num": 16,
  "dtype": "bf16",
  "world_size": 32,
  "tp_size": 2,
  "pp_size": 2,
  "ep_size": 1,
  "etp_size": 1,
  "moe_dispatcher_policy": "all2all",
  "enable_sequence_parallel": true,
  "interleaving_size": 1,
  "zero_state": 1,
  "enable_dropout": false,
  "use_fused_norm": true,
  "no_sync": true,
  "use_math_sdp": false,
  "use_flash_sdp": true,
  "use_fp32_accum_grad": true,
  "enable_recompute": true,
  "skip_ckpt_micro_batch_num": 0,
  "mem_factor": 0.94,
  "recompute_granularity": "full_block",
  "recompute_layer_num": 4,
  "attn_recompute": false,
  "mla_rms_recompute": false,
  "mlp_recompute": false,
  "mlp_rms_recompute": false
}
EOF
if expect_ok "simulate --strategy SimuMax file" simulate --json --strategy "$TMP/simumax_strategy.json"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["strategy"]
want = {"world_size": 32, "tp_size": 2, "pp_size": 2, "dp": 8, "seq_len": 4096,
        "micro_batch_size": 1, "global_batch_size": 128, "micro_batch_num": 16, "zero_state": 1,
        "recompute": "full", "recompute_layer_num": 4, "enable_sequence_parallel": True}
bad = {k: (s.get(k), v) for k, v in want.items() if s.get(k) != v}
assert not bad, "strategy fields (got, want): %r" % bad
assert len(d["stages"]) == 2
assert d["step_time_s"] > 0
' <"$OUT" 2>&1); then
    ok "simulate --strategy: the file's tp/pp/world_size/micro_batch_num/recompute are used"
  else
    bad "simulate --strategy: the file's fields are used" "$msg"
  fi
fi
# Flags override the file.
if expect_ok "simulate --strategy + --tp 4" simulate --json --strategy "$TMP/simumax_strategy.json" --tp 4; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["strategy"]["tp_size"] == 4 and d["strategy"]["dp"] == 4' <"$OUT" 2>/dev/null; then
    ok "simulate --strategy + --tp 4: the flag overrides the file"
  else
    bad "simulate --strategy + --tp 4: the flag overrides the file" "$(head -c 300 "$OUT")"
  fi
fi
# Text output of the same.
if expect_ok "simulate --strategy (text)" simulate --strategy "$TMP/simumax_strategy.json"; then
  if grep -q "step time" "$OUT"; then ok "simulate --strategy (text): prints 'step time'"; else bad "simulate --strategy (text): prints 'step time'" "$(head -c 300 "$OUT")"; fi
fi

# --- the report's strategy feeds back in ------------------------------------------------------------
# simulate --json, take .strategy into a file, simulate --strategy FILE: the same step.
roundtrip() {
  local name=$1 model=$2
  shift 2
  if ! expect_ok "$name (flags)" simulate --model "$model" --json "$@"; then return; fi
  cp "$OUT" "$TMP/$name.report.json"
  python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["strategy"], open(sys.argv[2], "w"))' \
    "$TMP/$name.report.json" "$TMP/$name.strategy.json"
  if ! expect_ok "$name (--strategy echo)" simulate --model "$model" --hardware h100_sxm_80gb \
    --strategy "$TMP/$name.strategy.json" --json; then return; fi
  if msg=$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["step_time_s"] == b["step_time_s"], (a["step_time_s"], b["step_time_s"])
assert a["peak_mem_bytes"] == b["peak_mem_bytes"]
assert a["strategy"] == b["strategy"], (a["strategy"], b["strategy"])
' "$TMP/$name.report.json" "$OUT" 2>&1); then
    ok "$name: the report's strategy gives the same step_time_s"
  else
    bad "$name: the report's strategy gives the same step_time_s" "$msg"
  fi
}
roundtrip "echo moe" mixtral-8x7b --gpus 32 --tp 2 --pp 2 --vpp 2 --ep 4 --etp 1 --gbs 64 \
  --recompute selective --recompute-modules core_attn,moe_act --dtype fp8 --order tp-dp-cp-pp \
  --moe-dedup-dispatch --ep-overlap 0.3 --fused-cross-entropy --offload-optimizer
roundtrip "echo cp zb" llama3-8b --gpus 16 --tp 2 --cp 2 --pp 2 --cp-comm-type a2a \
  --schedule zb_h1 --seq 8192 --gbs 32 --attention-kernel fa2 --no-main-grad-fp32 --no-sp
roundtrip "echo fsdp full" llama3-8b --gpus 16 --fsdp --pp 2 --recompute full --recompute-layers 3 \
  --micro-batch-num 4 --uneven-pipeline --no-overlap
# The echo also works with a layout flag on top: global_batch_size is kept.
if expect_ok "echo + --tp 4" simulate --model mixtral-8x7b --strategy "$TMP/echo moe.strategy.json" --tp 4 --json; then
  if python3 -c 'import json,sys; s=json.load(sys.stdin)["strategy"]; assert s["tp_size"] == 4 and s["global_batch_size"] == 64, s' <"$OUT" 2>/dev/null; then
    ok "echo + --tp 4: the flag overrides, the global batch stays"
  else
    bad "echo + --tp 4: the flag overrides, the global batch stays" "$(head -c 300 "$OUT")"
  fi
fi
if expect_ok "report version and calibration" simulate --json; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["trainsim_version"] and len(d["hardware_calibration"]) == 10 and d["hardware_calibration"].startswith("20"), d.get("hardware_calibration")' <"$OUT" 2>/dev/null; then
    ok "simulate --json: trainsim_version and hardware_calibration"
  else
    bad "simulate --json: trainsim_version and hardware_calibration" "$(head -c 300 "$OUT")"
  fi
fi
expect_field_error "bad order flag" "--order" simulate --order tp-tp
expect_field_error "bad cp-comm-type flag" "--cp-comm-type" simulate --cp-comm-type ring
expect_field_error "ep-overlap 2" "--ep-overlap" simulate --ep-overlap 2
expect_field_error "tp not an integer" "--tp" simulate --tp x
expect_field_error "zb_h1 with vpp 2" "schedule" simulate --gpus 8 --pp 2 --vpp 2 --schedule zb_h1
printf '{"world_size": 8, "tp_size": 2, "dp": 8}\n' >"$TMP/bad_dp.json"
expect_field_error "strategy with a wrong dp" "dp" simulate --strategy "$TMP/bad_dp.json"
if expect_ok "schema strategy --markdown" schema strategy --markdown; then
  if grep -q '^| `tp_size` | `--tp` |' "$OUT"; then ok "schema strategy: a row per field"; else bad "schema strategy: a row per field" "$(head -c 300 "$OUT")"; fi
fi
if expect_ok "schema efficiency (JSON)" schema efficiency; then
  if python3 -c 'import json,sys; rows=json.load(sys.stdin); assert any(r["key"] == "gemm_max" for r in rows)' <"$OUT" 2>/dev/null; then ok "schema efficiency: JSON rows"; else bad "schema efficiency: JSON rows" "$(head -c 300 "$OUT")"; fi
fi
if expect_ok "--version" --version; then
  if grep -qE '^[0-9]+\.[0-9]+\.[0-9]+' "$OUT"; then ok "--version prints the version"; else bad "--version prints the version" "$(cat "$OUT")"; fi
fi

# --- validate ----------------------------------------------------------------------------------------
CASES="$SHARED/validation/cases/public.jsonl"
if [ -r "$CASES" ]; then
  head -n 1 "$CASES" >"$TMP/one_case.jsonl"
else
  echo "note: $CASES not found; using a built-in case"
  cat >"$TMP/one_case.jsonl" <<'EOF'
{"id": "builtin-001", "source": "Narayanan et al. 2021 (SC21) Table 1", "model": {"name": "GPT-1.7B", "hidden_size": 2304, "num_hidden_layers": 24, "num_attention_heads": 24, "num_key_value_heads": 24, "head_dim": 96, "intermediate_size": 9216, "vocab_size": 51200, "hidden_act": "gelu", "tie_word_embeddings": true, "moe": null, "mla": null, "mtp_layers": 0}, "hardware": "a100_sxm_80gb", "hardware_overrides": null, "gpus": 32, "precision": "bf16", "parallel": {"tp": 1, "pp": 1, "vpp": null, "cp": null, "ep": null, "etp": null, "dp": null, "sp": false, "zero": 0, "fsdp": false}, "recompute": null, "seq": 2048, "mbs": null, "gbs": 512, "measured": {"iter_time_s": null, "tokens_per_s_per_gpu": null, "tflops_per_gpu": 137.0, "mfu": 0.44, "peak_mem_gib": null}, "target_iter_time_s": 3.52802, "target_derived": true, "notes": ""}
EOF
fi
if expect_ok "validate one case" validate "$TMP/one_case.jsonl"; then
  last=$(tail -n 1 "$OUT")
  if [[ "$last" =~ ^validate:\ time\ MAPE\ [0-9.]+%\ over\ 1\ cases\ \(0\ skipped\)\;\ memory\ MAPE ]]; then
    ok "validate one case: last line '$last'"
  else
    bad "validate one case: last line matches the summary format" "got: $last"
  fi
  above=$(tail -n 2 "$OUT" | head -n 1)
  if [[ "$above" =~ ^validate:\ band\ coverage\ [0-9.]+%\ of\ 1\ cases\ inside\ \[low,\ high\]$ ]]; then
    ok "validate one case: band coverage line above the summary '$above'"
  else
    bad "validate one case: band coverage line above the summary" "got: $above"
  fi
fi
if expect_ok "validate one case --json" validate --json "$TMP/one_case.jsonl"; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["cases_scored"] == 1 and d["cases_skipped"] == 0; assert d["cases"][0]["predicted_s"] > 0' <"$OUT" 2>/dev/null; then
    ok "validate --json: one case scored with a positive prediction"
  else
    bad "validate --json: one case scored with a positive prediction" "$(head -c 400 "$OUT")"
  fi
fi

ONE_ID=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["id"])' "$TMP/one_case.jsonl")
if expect_ok "validate --explain" validate "$TMP/one_case.jsonl" --explain "$ONE_ID"; then
  if grep -q "step time" "$OUT" && grep -q "time breakdown" "$OUT" &&
    grep -qE "^  case $ONE_ID \(.*\): measured [0-9.]+ s, predicted [0-9.]+ s, error [-+][0-9.]+ %$" "$OUT"; then
    ok "validate --explain: the case's step report and its measured time"
  else
    bad "validate --explain: the case's step report and its measured time" "$(tail -c 400 "$OUT")"
  fi
fi
expect_field_error "validate --explain unknown id" "--explain" validate "$TMP/one_case.jsonl" --explain no-such-case
run "validate missing file" validate "$TMP/no_such_file.jsonl"
if [ "$RC" -ne 0 ] && [ "$RC" -lt 128 ]; then
  ok "validate missing file: exit $RC"
else
  bad "validate missing file: non-zero exit without a crash" "got exit $RC"
fi
if grep -qF "no_such_file.jsonl" "$ERR"; then
  ok "validate missing file: stderr names the file"
else
  bad "validate missing file: stderr names the file" "stderr: $(cat "$ERR")"
fi

printf '{"id": "x-001", "model": \n' >"$TMP/broken.jsonl"
run "validate malformed line" validate "$TMP/broken.jsonl"
if [ "$RC" -ne 0 ] && [ "$RC" -lt 128 ]; then ok "validate malformed line: exit $RC"; else bad "validate malformed line: non-zero exit without a crash" "got exit $RC"; fi

# A line that is JSON but not a valid case is skipped with its reason, never a crash.
printf '{"id": 5, "model": null}\n' >"$TMP/odd_case.jsonl"
run "validate case with a numeric id" validate "$TMP/odd_case.jsonl"
if [ "$RC" -lt 128 ]; then
  ok "validate case with a numeric id: no crash (exit $RC)"
else
  bad "validate case with a numeric id: no crash" "got exit $RC" "stderr: $(head -c 300 "$ERR")"
fi

# --- calibrate: leave-one-source-out, ablation, uncertainty table --------------------------------
if [ -r "$CASES" ]; then
  # Two small families: 3 narayanan21 runs and 3 megatron2020 A100 runs.
  { grep '"id": "narayanan21-00[1-3]"' "$CASES"; grep '"id": "megatron2020-00[5-7]"' "$CASES"; } >"$TMP/two_families.jsonl"
  if expect_ok "calibrate --leave-one-source-out" calibrate "$TMP/two_families.jsonl" --leave-one-source-out --write-uncertainty "$TMP/uncertainty.json"; then
    last=$(tail -n 1 "$OUT")
    if [[ "$last" =~ ^calibrate:\ leave-one-source-out\ time\ MAPE\ [0-9]+\.[0-9]%\ over\ 6\ cases$ ]]; then
      ok "calibrate --leave-one-source-out: last line '$last'"
    else
      bad "calibrate --leave-one-source-out: last line" "got: $last"
    fi
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["cases"] == 6 and d["regimes"][0]["regime"] == "all"' "$TMP/uncertainty.json"; then
      ok "calibrate --write-uncertainty: table with the pooled regime"
    else
      bad "calibrate --write-uncertainty: table with the pooled regime" "$(head -c 300 "$TMP/uncertainty.json")"
    fi
  fi
  if expect_ok "calibrate --leave-one-source-out --json" calibrate "$TMP/two_families.jsonl" --leave-one-source-out --json; then
    if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["scheme"] == "leave-one-source-out" and len(d["sources"]) == 2' <"$OUT" 2>/dev/null; then
      ok "calibrate --leave-one-source-out --json: two held-out sources"
    else
      bad "calibrate --leave-one-source-out --json: two held-out sources" "$(head -c 300 "$OUT")"
    fi
  fi
  expect_field_error "calibrate --freeze unknown" frozen calibrate "$TMP/two_families.jsonl" --leave-one-source-out --freeze warp_speed
  expect_field_error "calibrate one family" cases calibrate "$TMP/one_case.jsonl" --leave-one-source-out
  expect_field_error "write-uncertainty without LOSO" --write-uncertainty calibrate "$TMP/two_families.jsonl" --write-uncertainty "$TMP/u.json"
  expect_field_error "source-blind without LOSO" --source-blind calibrate "$TMP/two_families.jsonl" --source-blind
  # Source-blind held-out line before the summary line; the table gains the stack-inferred band.
  if expect_ok "calibrate --source-blind" calibrate "$TMP/two_families.jsonl" --leave-one-source-out --source-blind; then
    if grep -q "^source-blind held-out .*time MAPE [0-9.]*% over 6 cases$" "$OUT" &&
       tail -n 1 "$OUT" | grep -q "^calibrate: leave-one-source-out time MAPE"; then
      ok "calibrate --source-blind: blind line, then the summary line last"
    else
      bad "calibrate --source-blind: blind line, then the summary line last" "$(tail -n 3 "$OUT")"
    fi
  fi
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(r["regime"] == "stack-inferred" and r["cases"] == 6 for r in d["regimes"])' "$TMP/uncertainty.json"; then
    ok "calibrate --write-uncertainty: stack-inferred band from the blinded cases"
  else
    bad "calibrate --write-uncertainty: stack-inferred band" "$(head -c 300 "$TMP/uncertainty.json")"
  fi
fi

# --- uncertainty band of simulate -------------------------------------------------------------
if expect_ok "simulate band" simulate --json; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["step_time_s_low"] < d["step_time_s"] < d["step_time_s_high"], d; assert d["uncertainty"]["regime"] != "none"' <"$OUT" 2>/dev/null; then
    ok "simulate --json: step_time_s_low < step_time_s < step_time_s_high, with a regime"
  else
    bad "simulate --json: step_time_s_low < step_time_s < step_time_s_high" "$(head -c 300 "$OUT")"
  fi
fi
# No stack named: the stack-inferred band; a named profile keeps its regime's.
if expect_ok "simulate band, no framework" simulate --json; then
  if python3 -c 'import json,sys; u=json.load(sys.stdin)["uncertainty"]; assert u["stack_inferred"] is True and u["regime"] == "stack-inferred", u' <"$OUT" 2>/dev/null; then
    ok "simulate --json without a framework: stack_inferred, stack-inferred band"
  else
    bad "simulate --json without a framework: stack_inferred" "$(head -c 300 "$OUT")"
  fi
fi
if expect_ok "simulate band, framework named" simulate --framework megatron-bridge --json; then
  if python3 -c 'import json,sys; u=json.load(sys.stdin)["uncertainty"]; assert u["stack_inferred"] is False and u["regime"] != "stack-inferred", u' <"$OUT" 2>/dev/null; then
    ok "simulate --json --framework megatron-bridge: the regime's band"
  else
    bad "simulate --json --framework megatron-bridge: the regime's band" "$(head -c 300 "$OUT")"
  fi
fi
if expect_ok "simulate band (text)" simulate; then
  if grep -Eq "step time +[0-9.]+ s ± [0-9]+ %" "$OUT"; then
    ok "simulate: prints 'step time X s ± Y %'"
  else
    bad "simulate: prints 'step time X s ± Y %'" "$(grep 'step time' "$OUT")"
  fi
fi

# --- search and sweep ---------------------------------------------------------------------------
if expect_ok "search" search --model llama3-8b --gpus 16 --gbs 64 --seq 2048 --top 3 --no-progress; then
  if tail -n 1 "$OUT" | grep -Eq '^search: evaluated [0-9]+ strategies \([0-9]+ feasible\) in [0-9.]+ s$'; then
    ok "search: stable last line"
  else
    bad "search: stable last line" "got: $(tail -n 1 "$OUT")"
  fi
fi
if expect_ok "search json" search --model llama3-8b --gpus 16 --gbs 64 --seq 2048 --top 3 --json; then
  if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["top"])==3 and d["feasible"]>0 and sum(d["rejected"].values())+d["feasible"]==d["evaluated"]' "$OUT"; then
    ok "search json: top 3, counts add up"
  else
    bad "search json: top 3, counts add up"
  fi
fi
if expect_ok "search LoRA 70B" search --model llama3-70b --gpus 8 --gbs 64 --seq 4096 --stage sft \
  --method qlora --lora-rank 64 --optimizer paged_adamw8bit --no-master-weights --top 2 --json --threads 2; then
  if msg=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = d["top"][0]["strategy_file"]
assert s["method"] == "qlora" and s["lora_rank"] == 64 and s["stage"] == "sft", s
assert s["optimizer"] == "paged_adamw8bit" and s["master_weights"] is False, s
' "$OUT" 2>&1); then
    ok "search: QLoRA workload and optimizer carried into every candidate"
  else
    bad "search: QLoRA workload carried" "$msg"
  fi
fi
expect_field_error "search bad method" "--method" search --gbs 64 --method lora2
expect_field_error "search bad method in a list" "--method" search --gbs 64 --method lora,lora2
expect_field_error "search empty rank in a list" "lora_rank" search --gbs 64 --method lora --lora-rank 8,,16
expect_field_error "search without gbs" gbs search --model llama3-8b --gpus 16
expect_field_error "search bad objective" objective search --gbs 64 --objective speed
if expect_ok "sweep" sweep --model llama3-8b --gpus 8,16 --gbs 32 --seq 2048 --out "$TMP/sw"; then
  if [ -s "$TMP/sw.csv" ] && [ -s "$TMP/sw_scaling.svg" ] && [ -s "$TMP/sw_breakdown.svg" ] &&
     [ "$(wc -l <"$TMP/sw.csv")" -eq 3 ]; then
    ok "sweep: CSV with 2 points and two SVGs"
  else
    bad "sweep: CSV with 2 points and two SVGs"
  fi
fi
expect_field_error "sweep bad vary" warp sweep --gbs 32 --vary warp=1

# --- event-driven timeline ------------------------------------------------------------------------
if expect_ok "trace and timeline" simulate --model llama3-8b --gpus 8 --pp 4 --gbs 16 \
    --trace "$TMP/step.json" --timeline "$TMP/step.svg" --slowdown 1:1.5; then
  if python3 - "$TMP/step.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
x = [e for e in ev if e.get("ph") == "X"]
assert x and all(k in e for e in x for k in ("name", "ph", "ts", "dur", "pid", "tid"))
last = {}
for e in sorted(x, key=lambda e: (e["pid"], e["tid"], e["ts"])):
    key = (e["pid"], e["tid"])
    assert e["ts"] >= last.get(key, -1)
    last[key] = e["ts"] + e["dur"] - 1e-3
PY
  then ok "trace: complete events with required fields, ordered per thread"; else bad "trace: complete events with required fields, ordered per thread"; fi
  if grep -q "<svg" "$TMP/step.svg" && grep -q "Event-driven step" "$OUT"; then
    ok "timeline: SVG written and event-driven section printed"
  else
    bad "timeline: SVG written and event-driven section printed"
  fi
fi
expect_ok "zero-bubble schedule" simulate --model llama3-8b --gpus 8 --pp 4 --gbs 16 --schedule zb_h1
expect_ok "dualpipe schedule" simulate --model llama3-8b --gpus 8 --pp 4 --gbs 16 --schedule dualpipe
expect_field_error "bad slowdown" slowdown simulate --model llama3-8b --gpus 8 --pp 4 --gbs 16 --slowdown 9:2

# --- assumed settings and framework pipeline splits (issue 9) ---------------------------------------
if expect_ok "assumed: only --model --gpus" simulate --model llama3-8b --gpus 16 --tp 2 --json; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
a = {x["field"]: x for x in d["assumed"]}
for k in ("global_batch_size", "zero_state", "enable_sequence_parallel", "overlap_grad_reduce",
          "dtype", "seq_len", "micro_batch_size"):
    assert k in a and a[k]["why"], "not listed: " + k
assert a["global_batch_size"]["value"] == "64", a["global_batch_size"]
for k in ("world_size", "tp_size"):
    assert k not in a, "given but listed: " + k
' <"$OUT" 2>&1); then
    ok "assumed: gbs, zero, sp, overlaps, dtype listed with a why; --gpus/--tp not"
  else
    bad "assumed: gbs, zero, sp, overlaps, dtype listed with a why; --gpus/--tp not" "$msg"
  fi
fi
if expect_ok "assumed: text section" simulate --model llama3-8b --gpus 8; then
  if grep -q "Assumed (not given" "$OUT" && grep -qE "^    global_batch_size +64 " "$OUT"; then
    ok "assumed: the text report has an Assumed section, one line per entry"
  else
    bad "assumed: the text report has an Assumed section, one line per entry" "$(tail -n 15 "$OUT")"
  fi
fi
if expect_ok "assumed: all given" simulate --model llama3-8b --from-megatron-args \
    "--bf16 --seq-length 4096 --global-batch-size 16" --gpus 8 --schedule 1f1b --host-issue-us 30 --json; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["assumed"] == [], d["assumed"]' <"$OUT" 2>/dev/null; then
    ok "assumed: nothing when Megatron-LM arguments and flags say everything (Megatron defaults kept)"
  else
    bad "assumed: nothing when Megatron-LM arguments and flags say everything" "$(head -c 600 "$OUT")"
  fi
fi
# split MODEL ARGS... EXPECTED: the per-stage layers of simulate --json.
split() {
  local name=$1 want=$2
  shift 2
  if expect_ok "$name" simulate "$@" --json; then
    if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
got = ",".join(str(s["layers"]) for s in d["stages"])
assert got == sys.argv[1], got
a = [x for x in d["assumed"] if x["field"] == "pipeline_split"]
assert len(a) == (0 if "first" in sys.argv[2] else 1), d["assumed"]
' "$want" "$*" <"$OUT" 2>&1); then
      ok "$name: layers per stage $want"
    else
      bad "$name: layers per stage $want" "$msg"
    fi
  fi
}
split "405B pp 8 vpp 8" 15,16,16,16,16,16,16,15 --model llama3.1-405b --gpus 512 --tp 8 --pp 8 --vpp 8 --gbs 64 --seq 8192
split "DeepSeek-V3 pp 4" 15,16,16,14 --model deepseek-v3 --hardware h800_sxm_80gb --gpus 256 --pp 4 --ep 64 --gbs 256
split "DeepSeek-V3 pp 16" 3,4,4,4,4,4,4,4,4,4,4,4,4,4,4,2 --model deepseek-v3 --hardware h800_sxm_80gb --gpus 1024 --pp 16 --ep 64 --gbs 1024
split "Qwen3-235B pp 8 vpp 4" 11,12,12,12,12,12,12,11 --model qwen3-235b-a22b --gpus 256 --tp 2 --pp 8 --vpp 4 --ep 8 --gbs 256
split "first and last given" 7,8,8,8,8,8,8,6 --model deepseek-v3 --hardware h800_sxm_80gb --gpus 512 --pp 8 --ep 64 --gbs 512 --first-pipeline-layers 7 --last-pipeline-layers 6
expect_field_error "first and last not dividing the middle" "first_pipeline_num_layers" simulate --model deepseek-v3 --hardware h800_sxm_80gb --gpus 512 --pp 8 --ep 64 --gbs 512 --first-pipeline-layers 8
expect_field_error "more chunks than layers" "pp" simulate --model llama3-8b --gpus 40 --pp 40 --gbs 40
if expect_ok "search with an uneven split" search --model deepseek-v3 --hardware h800_sxm_80gb --gpus 64 --gbs 64 --top 3 --json --no-progress; then
  if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["rejected"].get("does not divide: pp", 0) < d["evaluated"]; assert d["top"]' <"$OUT" 2>/dev/null; then
    ok "search: DeepSeek-V3 (61 layers) gets feasible strategies"
  else
    bad "search: DeepSeek-V3 (61 layers) gets feasible strategies" "$(head -c 400 "$OUT")"
  fi
fi
printf '%s\n' '{"id": "vendor-001", "source": "Some vendor benchmark table (2025)", "model": {"name": "Llama-3-70B", "hidden_size": 8192, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 28672, "vocab_size": 128256, "hidden_act": "silu", "tie_word_embeddings": false, "moe": null, "mla": null, "mtp_layers": 0}, "hardware": "h100_sxm_80gb", "hardware_overrides": null, "gpus": 64, "precision": "bf16", "parallel": {"tp": 4, "pp": 4, "vpp": null, "cp": 1, "ep": null, "etp": null, "dp": null, "sp": null, "zero": null, "fsdp": null}, "recompute": null, "seq": 8192, "mbs": 1, "gbs": 128, "measured": {}, "target_iter_time_s": 10.0, "target_derived": false, "notes": ""}' >"$TMP/vendor.jsonl"
if expect_ok "validate: unknown source on H100" validate --json "$TMP/vendor.jsonl"; then
  if msg=$(python3 -c '
import json, sys
c = json.load(sys.stdin)["cases"][0]
assert c["framework"] == "generic-modern", c["framework"]
a = {x["field"]: x for x in c["assumed"]}
assert a["parallel.sp"]["value"] == "true" and "no profile matches" in a["parallel.sp"]["why"], a
assert a["parallel.zero"]["value"] == "1" and a["tp_comm_overlap"]["value"] == "true", a
assert "recompute" in a, a
' <"$OUT" 2>&1); then
    ok "validate: unknown source on H100 takes generic-modern (sp, zero 1, TP overlap) and says so"
  else
    bad "validate: unknown source on H100 takes generic-modern (sp, zero 1, TP overlap) and says so" "$msg"
  fi
fi
if expect_ok "validate text: assumed count" validate "$TMP/vendor.jsonl"; then
  if grep -qE "^assumed: [0-9]+ settings" "$OUT"; then ok "validate text: assumed count line"; else bad "validate text: assumed count line" "$(tail -n 3 "$OUT")"; fi
fi

# --- Megatron-LM launch scripts (issue 10) -----------------------------------------------------------
SCRIPTS="$(dirname "$0")/../src/spec/testdata/megatron_scripts"
if expect_ok "megatron-script: Llama-3-8B FP8 recipe" simulate --megatron-script \
    "$SCRIPTS/train_llama3_8b_h100_fp8.sh" --json; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["fits"], d["peak_mem_bytes"]
assert d["strategy"]["world_size"] == 8 and d["strategy"]["dtype"] == "fp8", d["strategy"]
assert [i["field"] for i in d["ignored"]] == ["--empty-unused-memory-level"], d["ignored"]
m = d["conventions"]["megatron"]
assert abs(m["elapsed_time_per_iteration_ms"] - 1e3 * d["step_time_s"]) < 1e-6, m
assert m["throughput_tflops_per_gpu"] > 0, m
' <"$OUT" 2>&1); then
    ok "megatron-script: fits on 8 x H100, ignored list, Megatron log convention"
  else
    bad "megatron-script: fits on 8 x H100, ignored list, Megatron log convention" "$msg"
  fi
  if [ "$(grep -c "warning: Megatron-LM arguments not modelled" "$ERR")" -eq 1 ]; then
    ok "megatron-script: one warning line per kind of ignored argument"
  else
    bad "megatron-script: one warning line per kind of ignored argument" "$(cat "$ERR")"
  fi
fi
expect_field_error "megatron-script: --model contradicts" "--num-layers" simulate \
  --megatron-script "$SCRIPTS/train_llama3_8b_h100_fp8.sh" --model llama3-70b
expect_field_error "megatron-script: no vocabulary" "--vocab-size" simulate \
  --megatron-script "$SCRIPTS/train_gpt3_175b_distributed.sh"
expect_field_error "megatron args: unmatched quote" "line 1" simulate \
  --from-megatron-args "--tensor-model-parallel-size '2"
expect_field_error "megatron args: zero global batch" "--global-batch-size" simulate \
  --from-megatron-args "--global-batch-size 0"
# --- framework files: DeepSpeed, torchtitan, SimuMax (issue 10) ---------------------------------------
FW="$(cd "$(dirname "$0")/.." && pwd)/src/spec/testdata"
if expect_ok "torchtitan TOML" simulate --json --torchtitan-config "$FW/torchtitan/llama3_405b.toml" \
  --gpus 128 --hardware h100_sxm_80gb; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["strategy"]
assert "405b" in json.dumps(d["model"]), d["model"]
assert s["tp_size"] == 8 and s["fsdp"] and s["dtype"] == "fp8" and s["tp_comm_overlap"], s
assert any(i["field"] == "training.compile" for i in d["ignored"]), d.get("ignored")
' <"$OUT" 2>&1) && grep -q "not simulated: training.compile" "$ERR"; then
    ok "torchtitan TOML: model, TP, FSDP, float8, async TP read; compile listed as ignored and warned"
  else
    bad "torchtitan TOML: model, TP, FSDP, float8, async TP read; compile ignored" "$msg" "$(cat "$ERR")"
  fi
fi
expect_field_error "torchtitan --model contradiction" "--model llama3-70b" simulate --model llama3-70b \
  --torchtitan-config "$FW/torchtitan/llama3_8b.toml"
expect_field_error "DeepSpeed offload_param" "zero_optimization.offload_param.device" simulate \
  --deepspeed-config "$FW/deepspeed/ds_z3_offload_config.json"
printf '%s\n' '{"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4, "train_batch_size": 48}' >"$TMP/ds_bad.json"
expect_field_error "DeepSpeed batch rule" "train_batch_size" simulate --gpus 8 --deepspeed-config "$TMP/ds_bad.json"
if expect_ok "DeepSpeed ZeRO-3 auto" simulate --json --gpus 8 --deepspeed-config "$FW/deepspeed/ds_z3_config.json"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["strategy"]["zero_state"] == 3, d["strategy"]
a = {x["field"]: x["value"] for x in d["assumed"]}
assert a.get("train_micro_batch_size_per_gpu") == "auto", a
' <"$OUT" 2>&1); then
    ok "DeepSpeed: stage 3 read, auto values listed as assumed"
  else
    bad "DeepSpeed: stage 3 read, auto values listed as assumed" "$msg"
  fi
fi
# --- Accelerate config YAML, ZeRO++, Megatron-LM CUDA graphs (issue 10) -----------------------------
if expect_ok "Accelerate FSDP1 HYBRID_SHARD" simulate --json --model llama3-8b --gbs 32 \
  --accelerate-config "$FW/accelerate/fsdp1_hybrid.yaml"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["strategy"]
assert s["world_size"] == 16 and s["fsdp"] and s["dist_opt_instances"] == 2, s
assert s["recompute"] == "full" and s["dtype"] == "bf16", s
' <"$OUT" 2>&1); then
    ok "Accelerate: HYBRID_SHARD over 2 machines read as HSDP (2 replicas), checkpointing, bf16"
  else
    bad "Accelerate: HYBRID_SHARD over 2 machines read as HSDP" "$msg"
  fi
fi
if expect_ok "Accelerate DeepSpeed file" simulate --json --model llama3-8b --mbs 1 \
  --accelerate-config "$FW/accelerate/deepspeed_file.yaml"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["strategy"]["zero_state"] == 3, d["strategy"]
' <"$OUT" 2>&1); then
    ok "Accelerate: deepspeed_config_file read beside the YAML (ZeRO-3)"
  else
    bad "Accelerate: deepspeed_config_file read beside the YAML" "$msg"
  fi
fi
# accelerate launch --config_file A train.py FILE: the launcher's layout under a TRL YAML config
if expect_ok "Accelerate + TRL config" simulate --json --model llama3-8b \
  --accelerate-config "$FW/accelerate/deepspeed_zero3.yaml" --trl-args "$FW/trl/open_r1_sft_demo.yaml"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["strategy"]
assert s["world_size"] == 8 and s["zero_state"] == 3 and s["offload_optimizer"], s
assert s["seq_len"] == 32768 and s["micro_batch_size"] == 2 and s["master_weights"], s
' <"$OUT" 2>&1); then
    ok "Accelerate + TRL: DeepSpeed ZeRO-3 from the launcher, batch and length from the TRL YAML"
  else
    bad "Accelerate + TRL: the launcher's layout under the training file" "$msg"
  fi
fi
printf 'distributed_type: DEEPSPEED\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: nowhere.json\n' >"$TMP/acc_ds.yaml"
expect_field_error "Accelerate DeepSpeed file missing" "deepspeed_config.deepspeed_config_file" simulate \
  --model llama3-8b --accelerate-config "$TMP/acc_ds.yaml"
if expect_ok "Accelerate unknown keys warned" simulate --json --model llama3-8b \
  --accelerate-config "$FW/accelerate/multi_gpu_compile.yaml"; then
  if grep -q "some_future_key" "$ERR" && grep -q '"some_future_key"' "$OUT"; then
    ok "Accelerate: unknown and unused keys listed as ignored and warned once"
  else
    bad "Accelerate: unknown keys listed as ignored" "$(cat "$ERR")"
  fi
fi
if expect_ok "Megatron CUDA graphs" simulate --json --model llama3-8b --gpus 8 \
  --from-megatron-args "--tensor-model-parallel-size 2 --cuda-graph-impl transformer_engine --cuda-graph-scope attn mlp"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["strategy"]["host_issue_us_per_kernel"] == 0, d["strategy"]
a = [x for x in d["assumed"] if x["field"] == "host_issue_us_per_kernel"]
assert len(a) == 1 and "CUDA graphs" in a[0]["why"] and "memory" in a[0]["why"], a
assert not any(i["field"].startswith("--cuda-graph") for i in d.get("ignored", [])), d.get("ignored")
' <"$OUT" 2>&1); then
    ok "Megatron-LM: CUDA graphs set host issue 0, said once in assumed, not listed as ignored"
  else
    bad "Megatron-LM: CUDA graphs set host issue 0" "$msg"
  fi
fi
# --- LLaMA-Factory YAML and TRL arguments (issue 12) ----------------------------------------------
if expect_ok "LLaMA-Factory full SFT + DeepSpeed file" simulate --json --gpus 8 --model llama3-8b \
  --llamafactory "$FW/llamafactory/llama3_full_sft.yaml"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["strategy"]
assert s["zero_state"] == 3 and s["method"] == "full" and s["stage"] == "sft", s
assert s["global_batch_size"] == 1 * 2 * 8 and s["seq_len"] == 2048, s
a = {x["field"]: x["value"] for x in d["assumed"]}
assert a.get("model_name_or_path") == "meta-llama/Meta-Llama-3-8B-Instruct", a
assert "logging_steps" in a.get("(not simulated)", ""), a
' <"$OUT" 2>&1); then
    ok "LLaMA-Factory: full SFT, ZeRO-3 from the named DeepSpeed file, gbs = 1 x 2 x 8"
  else
    bad "LLaMA-Factory: full SFT, ZeRO-3 from the named DeepSpeed file" "$msg"
  fi
fi
if expect_ok "LLaMA-Factory QLoRA" simulate --json --gpus 1 --model llama3-8b --hardware a100_sxm_80gb \
  --llamafactory "$FW/llamafactory/llama3_lora_sft_otfq.yaml"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["strategy"]
assert s["method"] == "qlora" and s["lora_rank"] == 8 and s["zero_state"] == 0, s
assert s["recompute"] == "full" and d["fits"], s
' <"$OUT" 2>&1); then
    ok "LLaMA-Factory: QLoRA on one A100 fits, checkpointing on by default"
  else
    bad "LLaMA-Factory: QLoRA on one A100" "$msg"
  fi
fi
expect_field_error "LLaMA-Factory hub id without --model" "model_name_or_path" simulate --gpus 8 \
  --llamafactory "$FW/llamafactory/llama3_lora_sft.yaml"
printf 'stage: sft\nfinetuning_type: lora\nlora_rnak: 16\n' >"$TMP/lf_bad.yaml"
expect_field_error "LLaMA-Factory unknown key" "lora_rnak" simulate --model llama3-8b --llamafactory "$TMP/lf_bad.yaml"
if expect_ok "TRL GRPO arguments" simulate --json --gpus 8 --model llama3-8b --trl-args "$FW/trl/grpo_config.json"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["strategy"]
assert s["stage"] == "grpo" and s["group_size"] == 8 and s["global_batch_size"] == 16, s
assert [p["name"] for p in d["phases"]][:1] == ["generation"], d["phases"]
' <"$OUT" 2>&1); then
    ok "TRL: GRPO, 8 x 2 x 8 completions = 16 prompts of 8, generation phase reported"
  else
    bad "TRL: GRPO completions as prompts" "$msg"
  fi
fi
printf '{"per_device_batch_size": 4}\n' >"$TMP/trl_bad.json"
expect_field_error "TRL unknown key" "per_device_batch_size" simulate --model llama3-8b --trl-args "$TMP/trl_bad.json"
expect_field_error "two framework files" "--llamafactory" simulate --model llama3-8b \
  --llamafactory "$FW/llamafactory/llama3_lora_sft.yaml" --trl-args "$FW/trl/sft_config.json"
if expect_ok "SimuMax system file as hardware" simulate --json \
  --model "$FW/simumax/models/llama3-70b.json" --strategy "$FW/simumax/strategy/tp1_pp4_vp2_sync_mbs1_mbc8_no_ckpt.json" \
  --hardware "$FW/simumax/system/b200_bf16_ceperm.json"; then
  if msg=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["strategy"]["recompute"] == "none" and d["strategy"]["interleaving_size"] == 2, d["strategy"]
ig = {x["field"] for x in d["ignored"]}
assert {"pp_net", "dp_net", "pp_comm_async"} <= ig, ig
a = {x["field"] for x in d["assumed"]}
assert "efficiency" in a and "hbm_gib" in a, a
' <"$OUT" 2>&1); then
    ok "SimuMax: system file loads as hardware with its assumptions; *_net and pp_comm_async listed"
  else
    bad "SimuMax: system file loads as hardware; *_net and pp_comm_async listed" "$msg"
  fi
fi
# --- infer: serving latency and throughput (docs/INFERENCE.md) -------------------------------------
if expect_ok "infer --json" infer --model llama3-8b --hardware h100_sxm_80gb --prompt-len 512 --output-len 128 --batch 8 --json; then
  if msg=$(python3 -c '
import json, sys
r = json.load(sys.stdin)
for k in ("ttft_s", "tpot_s", "output_tokens_per_s", "output_tokens_per_s_per_gpu", "weights_bytes",
          "kv_cache_bytes", "max_concurrent_sequences", "fits", "assumed"):
    assert k in r, k
assert abs(r["output_tokens_per_s"] - 8 * 128 / (r["ttft_s"] + 128 * r["tpot_s"])) < 1e-6 * r["output_tokens_per_s"]
assert r["kv_cache_bytes"] == 8 * 640 * 131072, r["kv_cache_bytes"]
' <"$OUT" 2>&1); then ok "infer --json: interface keys and the throughput formula"; else bad "infer --json: interface keys and the throughput formula" "$msg"; fi
  # The 80 % band of the headline figures (docs/VALIDATION.md, "Inference band").
  if msg=$(python3 -c '
import json, sys
r = json.load(sys.stdin)
u = r["uncertainty"]
assert u["regime"] and u["cases"] >= 15 and u["rel_below"] > 0 and u["rel_above"] > 0, u
for k in ("output_tokens_per_s", "ttft_s", "tpot_s"):
    assert r[k + "_low"] < r[k] < r[k + "_high"], k
assert abs(r["output_tokens_per_s_low"] - r["output_tokens_per_s"] * (1 - u["rel_below"])) < 1e-6 * r["output_tokens_per_s"]
' <"$OUT" 2>&1); then ok "infer --json: band around throughput, TTFT and TPOT"; else bad "infer --json: band around throughput, TTFT and TPOT" "$msg"; fi
fi
if expect_ok "infer text band" infer --model llama3-8b --hardware h100_sxm_80gb --prompt-len 512 --output-len 128 --batch 8; then
  if grep -q "^80 % band (.* regime, [0-9]* held-out cases): output" "$OUT"; then ok "infer text: band line"; else bad "infer text: band line" "$(head -3 "$OUT")"; fi
fi
expect_field_error "infer gpus 3 tp 2" gpus infer --gpus 3 --tp 2 --prompt-len 128 --output-len 128
expect_field_error "infer bad weight dtype" weight_dtype infer --weight-dtype int3 --prompt-len 128 --output-len 128
expect_field_error "infer unknown engine" engine infer --engine foo --prompt-len 128 --output-len 128
expect_field_error "infer prompt 0" prompt_len infer --prompt-len 0 --output-len 128
expect_field_error "infer rate with batch" rate infer --rate 1 --batch 4 --prompt-len 128 --output-len 128
if expect_ok "infer --rate --json" infer --rate 2 --prompt-len 512 --output-len 128 --json; then
  if msg=$(python3 -c '
import json, sys
v = json.load(sys.stdin)["serving"]
assert not v["saturated"] and v["ttft_p99_s"] >= v["ttft_p50_s"] > 0, v
' <"$OUT" 2>&1); then ok "infer --rate: p50/p99 latencies"; else bad "infer --rate: p50/p99 latencies" "$msg"; fi
fi

if expect_ok "infer --search --json" infer --search --model llama3-8b --hardware h100_sxm_80gb --gpus 4 --prompt-len 512 --output-len 128 --slo-tpot-ms 10 --json; then
  if msg=$(python3 -c '
import json, sys
j = json.load(sys.stdin)
b = j["best"]
assert j["kind"] == "infer_search" and j["feasible"] >= 1 and b["tpot_s"] <= 0.010, j
assert all(c["output_tokens_per_s"] <= b["output_tokens_per_s"] for c in j["candidates"]), j
assert b["tp"] * b["pp"] * b["replicas"] == 4 and b["launch_command"].startswith("vllm serve"), b
' <"$OUT" 2>&1); then ok "infer --search: best layout under the SLO"; else bad "infer --search: best layout under the SLO" "$msg"; fi
fi
if expect_ok "infer --export vllm" infer --model llama3-70b --hardware h100_sxm_80gb --gpus 4 --tp 4 --prompt-len 1024 --output-len 256 --batch 8 --draft-model llama3-8b --spec-tokens 4 --acceptance-rate 0.8 --export vllm; then
  if grep -q -- "--speculative-config" "$OUT" && grep -q -- "--tensor-parallel-size 4" "$OUT"; then ok "infer --export vllm: the launch line"; else bad "infer --export vllm: the launch line" "$(cat "$OUT")"; fi
fi
expect_field_error "infer --search bad objective" objective infer --search --objective speed --prompt-len 128 --output-len 128
expect_field_error "infer spec without draft" draft_model infer --spec-tokens 4 --acceptance-rate 0.5 --prompt-len 128 --output-len 128 --batch 4
# Disaggregated prefill/decode: pools, KV over the NIC (bytes / NIC bandwidth + latency), goodput.
if expect_ok "infer --disaggregate --json" infer --model llama3-70b --hardware h100_sxm_80gb --disaggregate 1:3 --prefill-tp 8 --decode-tp 4 --prompt-len 4000 --output-len 256 --batch 16 --slo-tpot-ms 100 --json; then
  if msg=$(python3 -c '
import json, sys
j = json.load(sys.stdin)
d = j["disaggregation"]
assert d["prefill_gpus"] == 8 and d["decode_gpus"] == 12 and j["replicas"] == 3, d
assert d["kv_transfer_bytes"] == 4000 * 327680 and d["kv_transfer_bytes_per_gpu"] == 4000 * 40960, d
assert abs(d["kv_transfer_s"] - (d["kv_transfer_bytes_per_gpu"] / d["nic_bw_bytes_per_s"] + d["nic_latency_s"])) < 1e-12, d
assert abs(j["ttft_s"] - d["prefill_s"] - d["kv_transfer_s"]) < 1e-12, j
assert 0 < d["prefill_utilization"] <= 1 and 0 < d["decode_utilization"] <= 1, d
assert d["meets_slo"] and abs(d["goodput_requests_per_s_per_gpu"] - d["requests_per_s"] / 20) < 1e-9, d
assert "kv_producer" in j["launch_command"] and "kv_consumer" in j["launch_command"], j
' <"$OUT" 2>&1); then ok "infer --disaggregate: pools, KV transfer, goodput"; else bad "infer --disaggregate: pools, KV transfer, goodput" "$msg"; fi
fi
expect_field_error "infer disaggregate gpus mismatch" gpus infer --disaggregate 1:1 --gpus 3 --prompt-len 128 --output-len 128
expect_field_error "infer disaggregate bad split" disaggregate infer --disaggregate 0:2 --prompt-len 128 --output-len 128
expect_field_error "infer prefill-tp without disaggregate" prefill_tp infer --prefill-tp 2 --prompt-len 128 --output-len 128

# --- plan and recommend (issue 13, docs/PLAN.md) ------------------------------------------------------
if expect_ok "plan --json" plan --model llama3-8b --gpus 8 --tp 2 --gbs 64 --tokens 1e10 --json; then
  if python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("steps", "wall_time_s", "ideal_wall_time_s", "gpu_hours", "cost_usd", "energy_kwh",
          "co2_kg", "goodput", "checkpoint_interval_s", "step", "assumed"):
    assert k in j, k
assert abs(j["cost_usd"] - j["gpu_hours"] * j["price_usd_per_gpu_hour"]) <= 1e-9 * j["cost_usd"]
assert j["wall_time_s"] >= j["ideal_wall_time_s"] > 0 and 0 < j["goodput"] <= 1
assert j["step"]["strategy"]["tp_size"] == 2, j["step"]["strategy"]
assert any(a["field"] == "mtbf_gpu_hours" for a in j["assumed"])
PY
  then ok "plan --json: documented keys, cost = GPU-hours x price, step report"; else bad "plan --json: keys" "$(head -c 400 "$OUT")"; fi
fi
if expect_ok "plan text with a price and epochs" plan --model llama3-8b --gpus 8 --epochs 2 --dataset-tokens 5e9 --price-per-gpu-hour 2; then
  if grep -q "goodput" "$OUT" && grep -q "at \$2.00 per GPU-hour" "$OUT"; then ok "plan text: goodput and the given price"; else bad "plan text" "$(tail -30 "$OUT")"; fi
fi
run "plan without a price" plan --model llama3-8b --gpus 8 --tokens 1e9 --hw-override '{"price_usd_per_gpu_hour": 0}' --json
if [ "$RC" -eq 0 ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["cost_usd"] is None and "price" in j["cost_note"]' "$OUT"; then
  ok "plan without a price: cost null with a reason"
else
  bad "plan without a price: cost null with a reason" "rc $RC" "$(head -c 300 "$OUT") $(cat "$ERR")"
fi
if expect_ok "plan --search --compute-optimal" plan --model llama3-8b --gpus 16 --gbs 128 --search --compute-optimal --flops 1e22 --json; then
  if python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); c=j["compute_optimal"]; assert abs(6*c["params"]*c["tokens"]/1e22-1)<1e-9 and "approach 3" in c["fit"]; assert j["assumed"][0]["field"]=="tokens"' "$OUT"; then
    ok "plan --compute-optimal: 6 N D = budget, fit named"
  else bad "plan --compute-optimal" "$(head -c 400 "$OUT")"; fi
fi
expect_field_error "plan without tokens" tokens plan --model llama3-8b --gpus 8
expect_field_error "plan tokens and epochs" tokens plan --model llama3-8b --tokens 1e9 --epochs 2 --dataset-tokens 1e9
expect_field_error "plan epochs alone" epochs plan --model llama3-8b --epochs 2
expect_field_error "plan pue below 1" pue plan --model llama3-8b --tokens 1e9 --pue 0.5
expect_field_error "plan negative mtbf" mtbf_gpu_hours plan --model llama3-8b --tokens 1e9 --mtbf-gpu-hours -5
expect_field_error "plan flops without compute-optimal" flops plan --model llama3-8b --tokens 1e9 --flops 1e22
expect_field_error "plan bad strategy" world_size plan --gpus 12 --tp 8 --tokens 1e9
if expect_ok "recommend --json" recommend --model llama3-8b --tokens 1e10 --gpus 8,16 --gbs 64 --deadline-days 30 --json; then
  if python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["plans"], j
for p in j["plans"]:
    for k in ("hardware", "gpus", "strategy", "wall_time_s", "cost_usd", "energy_kwh"):
        assert k in p, k
    assert p["wall_time_s"] <= 30 * 86400
costs = [p["cost_usd"] for p in j["plans"] if p["calibrated"]]
assert costs == sorted(costs), costs
assert j["binding"]
PY
  then ok "recommend --json: plans within the deadline, cheapest first"; else bad "recommend --json" "$(head -c 600 "$OUT")"; fi
fi
# A null catalogue peak ("no source found", a10g_24gb): refused by name, never a guessed figure.
expect_field_error "simulate on a null bf16 peak" peak_tflops.bf16 simulate --model llama3-8b --hardware a10g_24gb --gpus 8 --tp 8
expect_field_error "search on a null bf16 peak" peak_tflops.bf16 search --model llama3-8b --hardware aws_g5_48xlarge --gpus 8 --gbs 8
expect_field_error "plan on a null bf16 peak" peak_tflops.bf16 plan --model llama3-8b --hardware a10g_24gb --gpus 8 --tp 8 --gbs 8 --tokens 1e9
expect_field_error "infer on a null bf16 peak (no inf TTFT)" peak_tflops.bf16 infer --model llama3-8b --hardware a10g_24gb --prompt-len 512 --output-len 64
expect_ok "simulate on a null peak given by --hw-override" simulate --model llama3-8b --hardware a10g_24gb --gpus 8 --tp 8 --hw-override '{"peak_tflops": {"bf16": 70}}'
if expect_ok "list hardware --json (null peaks)" list hardware --json; then
  if python3 -c 'import json,sys; d={h["id"]: h for h in json.load(open(sys.argv[1]))}; g=d["a10g_24gb"]; assert g["peak_tflops"]["bf16"] is None and g["sources"]["peak_tflops.bf16"]["document"] == "no source found" and not g["calibrated"]' "$OUT"
  then ok "list hardware --json: a10g_24gb bf16 null, no source found, uncalibrated"; else bad "list hardware --json: a10g_24gb" "$(head -c 300 "$OUT")"; fi
fi
expect_field_error "recommend bad objective" objective recommend --model llama3-8b --tokens 1e9 --objective speed
expect_field_error "recommend negative deadline" deadline_days recommend --model llama3-8b --tokens 1e9 --deadline-days -1
expect_field_error "recommend without tokens" tokens recommend --model llama3-8b
if expect_ok "search says how many alike were collapsed" search --model llama3-8b --gpus 16 --gbs 64 --top 5 --no-progress; then
  if grep -q "collapsed" "$OUT"; then ok "search: collapsed count in the summary"; else bad "search: collapsed count" "$(tail -3 "$OUT")"; fi
fi

# --- same input, same bytes with 1 or 2 threads (only elapsed-time fields may differ) ---------------
strip_elapsed='import json,sys
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k not in ("seconds", "summary")}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(sys.stdin)), sort_keys=True))'
if expect_ok "search --threads 1" search --model llama3-8b --gpus 16 --gbs 64 --json --no-progress --threads 1; then
  one=$(python3 -c "$strip_elapsed" <"$OUT")
  if expect_ok "search --threads 2" search --model llama3-8b --gpus 16 --gbs 64 --json --no-progress --threads 2; then
    two=$(python3 -c "$strip_elapsed" <"$OUT")
    if [ "$one" = "$two" ]; then ok "search: same JSON with 1 and 2 threads"; else bad "search: same JSON with 1 and 2 threads" "$(diff <(echo "$one" | tr ',' '\n') <(echo "$two" | tr ',' '\n') | head -5)"; fi
  fi
fi

# --- hostile-input probes (tests/cli_probes.txt) -------------------------------------------------
FIX="$TMP/fix"
mkdir -p "$FIX/dir"
: >"$FIX/empty.jsonl"
python3 - "$FIX" "$SCRIPT_DIR/.." <<'PY'
import json, sys
fix = sys.argv[1]
deep = "[" * 50000 + "]" * 50000
open(f"{fix}/deep.json", "w").write(deep)
open(f"{fix}/big.json", "w").write("{" + " " * (17 << 20) + "}")
# A hardware file that leaves out host_link_gbps_per_dir, sm_count and host_mem_gib (their
# defaults must be listed as assumed; host_mem_gib's where the plan keeps anything on the host).
hw = json.load(open(f"{sys.argv[2]}/data/hardware/h100_sxm_80gb.json"))
hw.pop("host_link_gbps_per_dir")
hw.pop("sm_count")
hw.pop("host_mem_gib")
hw["id"] = "probe_hw_defaults"
json.dump(hw, open(f"{fix}/hw_defaults.json", "w"))
hw["host_mem_gib"] = 0
json.dump(hw, open(f"{fix}/hw_host_mem_zero.json", "w"))
open(f"{fix}/tt_array_of_tables.toml", "w").write("[[training]]\nsteps = 10\n")
open(f"{fix}/tt_nested_array_of_tables.toml", "w").write("[training]\nsteps = 10\n"
                                                         "[[training.schedule]]\nwarmup = 2\n")
# HF configs: one with keys trainsim does not model (listed as ignored), one with harmless
# extras only (nothing listed).
hf = json.load(open(f"{sys.argv[2]}/data/models/llama3-8b.json"))
json.dump(dict(hf, transformers_version="4.57.0", use_cache=True, _name_or_path="probe"),
          open(f"{fix}/hf_harmless.json", "w"))
json.dump(dict(hf, vision_config={"hidden_size": 1024}, moe_latent_size=512),
          open(f"{fix}/hf_unread.json", "w"))
# Nested MPT configs and the GPT-2 reader: sub-keys not modelled are named as parent.child, an
# attention kind not modelled is refused (they were dropped, or read as multi-head).
mpt = json.load(open(f"{sys.argv[2]}/src/spec/testdata/hf_configs/mpt-7b-instruct.json"))
mpt["attn_config"]["prefix_lm"] = True
json.dump(mpt, open(f"{fix}/mpt_prefix_lm.json", "w"))
mpt["attn_config"]["attn_type"] = "linear_attention"
json.dump(mpt, open(f"{fix}/mpt_bad_attn.json", "w"))
# A key repeated inside a nested object is named by its path (it was "attn_type: duplicate key").
open(f"{fix}/mpt_dup.json", "w").write(json.dumps(mpt).replace(
    '"attn_type": "linear_attention"', '"attn_type": "multihead_attention", "attn_type": "x"'))
gpt2 = json.load(open(f"{sys.argv[2]}/src/spec/testdata/hf_configs/gpt2.json"))
json.dump(dict(gpt2, add_cross_attention=True), open(f"{fix}/gpt2_xattn.json", "w"))
json.dump({"world_size": 8, "tp_size": 4194304, "pp_size": 2097152, "cp_size": 2097152},
          open(f"{fix}/overflow_strategy.json", "w"))
case = {"id": "probe-001", "source": "probe", "model": {"name": "m", "hidden_size": 1024,
        "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 16,
        "head_dim": 64, "intermediate_size": 4096, "vocab_size": 32000, "hidden_act": "silu",
        "tie_word_embeddings": False, "moe": None, "mla": None, "mtp_layers": 0},
        "hardware": "h100_sxm_80gb", "hardware_overrides": None, "gpus": 8, "precision": "bf16",
        "parallel": {"tp": 1, "pp": 1, "vpp": None, "cp": 1, "ep": None, "etp": None, "dp": None,
                     "sp": None, "zero": None, "fsdp": None}, "recompute": None, "seq": 2048,
        "mbs": 1, "gbs": 64, "measured": {}, "target_iter_time_s": 1.0, "target_derived": False,
        "notes": ""}
def write(name, **change):
    c = json.loads(json.dumps(case))
    for k, v in change.items():
        if k == "parallel":
            c["parallel"].update(v)
        else:
            c[k] = v
    open(f"{fix}/{name}.jsonl", "w").write(json.dumps(c) + "\n")
write("one_case")
write("overflow_case", gpus=8, parallel={"tp": 4194304, "pp": 2097152, "cp": 2097152})
write("bad_precision", precision="bogus")
write("zero_target", target_iter_time_s=0)
write("case_extra_keys", bogus_key=1, parallel={"bogus": 2})
write("case_extra_rl_key", rl={"group_size": 8, "bogus_rl": 3})
write("case_extra_measured_key", measured={"iter_time_s": 1.0, "peak_mem_gb": 70})
line = json.dumps(case).replace('"model": {', '"model": ' + "[" * 50000 + "]" * 50000 + ', "x": {', 1)
open(f"{fix}/deep_case.jsonl", "w").write(line + "\n")
# Framework files (issue 11, second pass): a non-name YAML key, a repeated key, two documents,
# lengths and batches whose sum or product passes 2^31, duplicate keys inside a JSON string.
files = {
    "lf_key.yaml": "? [a, b]\n: 1\n",
    "lf_dup.yaml": "lora_rank: 8\nlora_rank: 16\n",
    "lf_docs.yaml": "stage: sft\n---\nstage: dpo\n",
    "lf_ppo_len.yaml": "stage: ppo\ncutoff_len: 2147483647\nmax_new_tokens: 2147483647\n",
    "trl_len.json": json.dumps({"num_generations": 8, "max_prompt_length": 2147483647,
                                "max_completion_length": 2147483647}),
    "trl_batch.json": json.dumps({"num_generations": 8, "per_device_train_batch_size": 65536,
                                  "gradient_accumulation_steps": 65536}),
    "trl_kwargs.json": json.dumps({"model_init_kwargs":
                                   '{"dtype": "bfloat16", "dtype": "float32"}'}),
}
for name, text in files.items():
    open(f"{fix}/{name}", "w").write(text)
# Bytes that are not UTF-8 in a YAML value (threw out of the JSON writer), a stray top-level ','
# (YAML::LoadAll allocated without end on it).
open(f"{fix}/lf_utf.yaml", "wb").write(b'stage: sft\nfsdp_config:\n  a: "\xff\xfe"\n')
open(f"{fix}/acc_utf.yaml", "wb").write(b'distributed_type: FSDP\nfsdp_config:\n  a: "\xff"\n')
open(f"{fix}/lf_comma.yaml", "w").write(",tage: ppo\nfinetuning_type: lora\n")
PY
probe_no=0
while IFS= read -r probe; do
  case "$probe" in '' | '#'*) continue ;; esac
  probe_no=$((probe_no + 1))
  want_rc=$(sed -E 's/^ *([0-9]+) *\|.*/\1/' <<<"$probe")
  want_text=$(sed -E 's/^[^|]*\| (.*) \| .*/\1/' <<<"$probe")
  args_text=$(sed -E 's/^[^|]*\|[^|]*\| //' <<<"$probe")
  eval "args=($args_text)"
  name="probe $probe_no: ${args_text:0:70}"
  run "probe$probe_no" "${args[@]}"
  if [ "$RC" -ne "$want_rc" ]; then
    bad "$name: exit $want_rc" "got exit $RC" "stderr: $(head -c 300 "$ERR")"
  elif [ "$want_rc" -eq 2 ] && [ "$(wc -l <"$ERR")" -ne 1 ]; then
    bad "$name: one line on stderr" "$(head -c 600 "$ERR")"
  elif [ "$want_rc" -eq 2 ] && grep -qE '[0-9]{20}' "$ERR"; then
    bad "$name: no number of 20+ digits in the message (a bound printed in full)" "$(head -c 300 "$ERR")"
  elif [ "$want_rc" -eq 2 ] && ! grep -qF -- "$want_text" "$ERR"; then
    bad "$name: stderr has '$want_text'" "stderr: $(head -c 300 "$ERR")"
  elif [ "$want_rc" -eq 0 ] && ! grep -qF -- "$want_text" "$OUT"; then
    bad "$name: stdout has '$want_text'" "stdout: $(head -c 300 "$OUT")"
  elif [ "$want_rc" -eq 0 ] && grep -qiE '(^|[^a-z])-?(nan|inf)([^a-z]|$)' "$OUT" "$ERR"; then
    bad "$name: no nan/inf" "$(grep -iE 'nan|inf' "$OUT" "$ERR" | head -3)"
  else
    ok "$name: exit $want_rc, '$want_text'"
  fi
done <"$SCRIPT_DIR/cli_probes.txt"

# HF config keys not read: named once each on stderr (and in the report: probe rows); harmless
# extras (tokenizer ids, versions, runtime switches) say nothing.
if expect_ok "hf config with unread keys" simulate --model "$FIX/hf_unread.json"; then
  if [ "$(grep -c "warning: ignored model-file key" "$ERR")" -eq 2 ] &&
    grep -q "ignored model-file key vision_config: a vision or audio encoder" "$ERR" &&
    grep -q "ignored model-file key moe_latent_size: " "$ERR"; then
    ok "hf config: one stderr line per key not read"
  else
    bad "hf config: one stderr line per key not read" "$(head -c 600 "$ERR")"
  fi
fi
if expect_ok "hf config with harmless extras" simulate --model "$FIX/hf_harmless.json"; then
  if grep -q "ignored model-file key\|have no effect" "$ERR"; then
    bad "hf config: harmless extras say nothing" "$(head -c 600 "$ERR")"
  else
    ok "hf config: harmless extras say nothing"
  fi
fi

# Cases left out of a success are named once on stderr (they were only in the report's table):
# validate's skipped cases, calibrate's unparsable ones.
cat "$FIX/one_case.jsonl" "$FIX/deep_case.jsonl" >"$FIX/one_good_one_bad.jsonl"
for verb in validate calibrate; do
  if expect_ok "$verb with keys outside the case schema" "$verb" "$FIX/case_extra_keys.jsonl"; then
    if [ "$(grep -c "warning: $verb: case keys not read .*: bogus_key (1 case), parallel.bogus (1 case)" "$ERR")" -eq 1 ]; then
      ok "$verb: one stderr line names the keys outside the case schema"
    else
      bad "$verb: one stderr line names the keys outside the case schema" "$(head -c 600 "$ERR")"
    fi
  fi
  if expect_ok "$verb with a skipped case" "$verb" "$FIX/one_good_one_bad.jsonl"; then
    if [ "$(grep -c "warning: $verb: 1 of 2 cases skipped" "$ERR")" -eq 1 ]; then
      ok "$verb: one stderr line names the skipped case"
    else
      bad "$verb: one stderr line names the skipped case" "$(head -c 600 "$ERR")"
    fi
  fi
done

# --- summary -----------------------------------------------------------------------------------------
echo
echo "cli_test: $PASS passed, $FAIL failed"
# Band coverage counts only cases that carry a band (regression: inference cases, which had
# none, read as 0 % coverage and diluted mixed files). Every inference case now carries the band
# of its regime (docs/VALIDATION.md, "Inference band"): coverage of all of them, at least 80 %,
# on the line above the last summary line.
INF_CASES="$SHARED/validation/cases/inference.jsonl"
if [ -f "$INF_CASES" ] && expect_ok "validate inference: band line" validate "$INF_CASES"; then
  n=$(wc -l <"$INF_CASES")
  if tail -n 2 "$OUT" | head -n 1 | grep -qE "^validate: band coverage (8[0-9]|9[0-9]|100)\.[0-9]% of $n cases"; then
    ok "validate inference: band coverage >= 80 % of every case, above the summary"
  else
    bad "validate inference: band coverage >= 80 % of every case, above the summary" "$(tail -n 2 "$OUT")"
  fi
fi
# --explain on an inference case prints the infer report and the target metric (regression: it
# failed with 'target_iter_time_s: must be a number').
if [ -f "$INF_CASES" ] &&
  expect_ok "validate --explain inference" validate "$INF_CASES" --explain inf_trtllm-038; then
  if grep -q "^Phases (per replica):" "$OUT" &&
    grep -q "case inf_trtllm-038 (inf_trtllm): output_tokens_per_s measured 2105" "$OUT"; then
    ok "validate --explain inference: infer report and target"
  else
    bad "validate --explain inference: infer report and target" "$(tail -c 400 "$OUT")"
  fi
fi
if [ "$FAIL" -ne 0 ]; then
  for f in "${FAILED[@]}"; do echo "  failed: $f"; done
  exit 1
fi
exit 0
