"""simulate(): the same document as `trainsim simulate --json`, keywords, errors."""
import json
import os
import shlex

import pytest

from conftest import SOURCE_DIR, cli_error, cli_json

EXAMPLE = dict(model="llama3-8b", hardware="h100_sxm_80gb", gpus=8, tp=1, pp=2, gbs=32, seq=4096)


def test_issue_example_equals_cli_json(ts):
    r = ts.simulate(**EXAMPLE)
    assert r == cli_json("simulate", "--model", "llama3-8b", "--hardware", "h100_sxm_80gb",
                         "--gpus", "8", "--tp", "1", "--pp", "2", "--gbs", "32", "--seq", "4096",
                         "--json")
    assert r["strategy"]["pp_size"] == 2 and r["step_time_s"] > 0


def flags_to_kwargs(ts, line):
    """A golden case's simulate flags as keywords (the CLI's short names, '-' written '_')."""
    types = {f["flag"][2:]: f["type"] for f in ts.strategy_fields()}
    kw, args, i = {}, shlex.split(line), 0
    while i < len(args):
        name = args[i][2:]
        if name == "no-overlap":
            kw.update(overlap_grad_reduce=False, overlap_param_gather=False)
        elif name in ("model", "hardware"):
            kw[name] = args[i + 1]
            i += 1
        elif types.get(name) == "bool":
            kw[name.replace("-", "_")] = True
        elif name.startswith("no-") and types.get(name[3:]) == "bool":
            kw[name[3:].replace("-", "_")] = False
        else:
            cast = {"int": int, "number": float}.get(types[name], str)
            kw[name.replace("-", "_")] = cast(args[i + 1])
            i += 1
        i += 1
    return kw


def golden_cases():
    with open(os.path.join(SOURCE_DIR, "tests", "golden", "cases.txt")) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


@pytest.mark.parametrize("line", golden_cases())
def test_golden_cases_equal_cli_json(ts, line):
    assert ts.simulate(**flags_to_kwargs(ts, line)) == cli_json("simulate", *shlex.split(line),
                                                                 "--json")


def test_strategy_dict_layers_like_a_strategy_file(ts, tmp_path):
    strategy = {"tp_size": 2, "pp_size": 2, "global_batch_size": 64, "recompute": "full"}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(strategy))
    r = ts.simulate("llama3-8b", strategy=strategy, pp=1, dtype="fp8")
    assert r == cli_json("simulate", "--strategy", str(path), "--pp", "1", "--dtype", "fp8",
                         "--json")
    assert r["strategy"]["tp_size"] == 2 and r["strategy"]["pp_size"] == 1


def test_canonical_keys_and_short_names_agree(ts):
    short = ts.simulate(tp=2, mbs=2, gbs=64, seq=2048, main_grad_fp32=False, recompute="selective")
    long = ts.simulate(tp_size=2, micro_batch_size=2, global_batch_size=64, seq_len=2048,
                       use_fp32_accum_grad=False, recompute="selective")
    assert short == long
    assert short["strategy"]["use_fp32_accum_grad"] is False


def test_typed_values(ts):
    # a list for a text field, a float for a number, None leaves the default
    r = ts.simulate(recompute="selective", recompute_modules=["core_attn", "mlp"], ep_overlap=0.25,
                    vpp=None)
    assert r == cli_json("simulate", "--recompute", "selective", "--recompute-modules",
                         "core_attn,mlp", "--ep-overlap", "0.25", "--json")


def test_model_and_hardware_dicts(ts):
    path = os.path.join(SOURCE_DIR, "data", "models", "llama3-8b.json")
    model = ts.load_model(path)
    assert isinstance(model, dict)
    hw_path = os.path.join(SOURCE_DIR, "data", "hardware", "a100_sxm_80gb.json")
    hw = ts.load_hardware(hw_path)
    r = ts.simulate(model, hw, tp=2)
    assert r == cli_json("simulate", "--model", path, "--hardware", hw_path, "--tp", "2", "--json")


def test_hw_override(ts):
    r = ts.simulate(hw_override={"nic_gbps_per_gpu": 200}, gpus=16, tp=8)
    assert r == cli_json("simulate", "--hw-override", '{"nic_gbps_per_gpu": 200}', "--gpus", "16",
                         "--tp", "8", "--json")


def test_detail_adds_the_layer_table(ts):
    assert ts.simulate(detail=True) == cli_json("simulate", "--detail", "--json")


@pytest.mark.parametrize("kw,flags", [
    (dict(tp=0), ["--tp", "0"]),
    (dict(tp=3), ["--tp", "3"]),
    (dict(dtype="fp7"), ["--dtype", "fp7"]),
    (dict(recompute="most"), ["--recompute", "most"]),
    (dict(tp_size=0), ["--tp", "0"]),
])
def test_errors_carry_the_cli_message(ts, kw, flags):
    with pytest.raises(ValueError) as e:
        ts.simulate(**kw)
    assert str(e.value) == cli_error("simulate", *flags)


def test_error_names_the_field(ts):
    with pytest.raises(ValueError) as e:
        ts.simulate(tp=0)
    assert e.value.field == "--tp"


def test_unknown_keyword_raises_naming_it(ts):
    with pytest.raises(TypeError, match="'tensor_parallel'"):
        ts.simulate(tensor_parallel=2)


def test_a_field_given_twice_raises(ts):
    with pytest.raises(TypeError, match="'tp'.*'tp_size'|'tp_size'.*'tp'"):
        ts.simulate(tp=2, tp_size=2)


@pytest.mark.parametrize("kw", [dict(tp="2"), dict(tp=2.0), dict(sp=1), dict(recompute=1),
                                dict(ep_overlap="0.5"), dict(tp=True)])
def test_wrong_python_types_raise(ts, kw):
    with pytest.raises(TypeError, match=next(iter(kw))):
        ts.simulate(**kw)


def test_a_string_model_is_never_a_file(ts, tmp_path):
    path = os.path.join(SOURCE_DIR, "data", "models", "llama3-8b.json")
    with pytest.raises(ValueError, match="unknown preset"):
        ts.simulate(model=path)
    with pytest.raises(ValueError, match="unknown preset"):
        ts.simulate(hardware=os.path.join(SOURCE_DIR, "data", "hardware", "h100_sxm_80gb.json"))
    with pytest.raises(TypeError):
        ts.simulate(model=tmp_path)  # a pathlib.Path is not a preset id either


def test_bad_model_dict_raises_value_error(ts):
    with pytest.raises(ValueError, match="model"):
        ts.simulate(model={"hidden_size": 4096})


def test_load_model_errors(ts, tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        ts.load_model(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ValueError, match="bad.json"):
        ts.load_model(str(bad))


def test_lists_equal_the_cli(ts):
    from conftest import run_cli
    for what, fn in (("models", ts.list_models), ("hardware", ts.list_hardware)):
        rc, out, _ = run_cli("list", what)
        assert rc == 0
        ids = [line.split()[0] for line in out.splitlines()]
        assert fn() == [i for i in ids if i != "id"]  # the table's header row
    assert "llama3-8b" in ts.list_models() and "h100_sxm_80gb" in ts.list_hardware()


def test_strategy_fields_equal_cli_schema(ts):
    assert ts.strategy_fields() == cli_json("schema", "strategy")


def test_version(ts):
    assert ts.__version__ == ts.simulate()["trainsim_version"]


def test_framework_config_text_equals_the_cli_file(ts):
    """framework_config: a LLaMA-Factory YAML's contents read as `--llamafactory FILE` reads it."""
    path = os.path.join(SOURCE_DIR, "src/spec/testdata/llamafactory/llama3_lora_sft.yaml")
    with open(path) as f:
        text = f.read()
    doc = ts.simulate("llama3-8b", "h100_sxm_80gb", gpus=8,
                      framework_config={"format": "llamafactory", "text": text})
    cli = cli_json("simulate", "--model", "llama3-8b", "--hardware", "h100_sxm_80gb", "--gpus",
                   "8", "--llamafactory", path, "--json")
    assert doc["step_time_s"] == cli["step_time_s"]
    assert doc["strategy"] == cli["strategy"]
    # The DeepSpeed file it names is never opened: the report says so.
    yaml = text + "deepspeed: examples/deepspeed/ds_z3_config.json\n"
    doc = ts.simulate("llama3-8b", "h100_sxm_80gb", gpus=8,
                      framework_config={"format": "llamafactory", "text": yaml})
    assert any(a["field"] == "deepspeed" and "deepspeed_text" in a["why"] for a in doc["assumed"])
    doc = ts.simulate("llama3-8b", "h100_sxm_80gb", gpus=8,
                      framework_config={"format": "llamafactory", "text": yaml,
                                        "deepspeed_text": '{"zero_optimization": {"stage": 3}}'})
    assert doc["strategy"]["zero_state"] == 3


def test_megatron_script_text_equals_the_cli_file(ts):
    """megatron_script: a launch script's text read as `--megatron-script FILE` reads it."""
    path = os.path.join(SOURCE_DIR, "src/spec/testdata/megatron_scripts/train_llama3_8b_h100_fp8.sh")
    with open(path) as f:
        text = f.read()
    doc = ts.simulate(hardware="h100_sxm_80gb", megatron_script=text)
    cli = cli_json("simulate", "--hardware", "h100_sxm_80gb", "--megatron-script", path, "--json")
    assert doc["step_time_s"] == cli["step_time_s"]
    assert doc["strategy"] == cli["strategy"]
    assert doc["assumed"] == cli["assumed"] and doc["ignored"] == cli["ignored"]
    # Keywords go on top of the script, as the CLI's flags do.
    doc = ts.simulate(hardware="h100_sxm_80gb", megatron_script=text, gbs=64)
    assert doc["strategy"]["global_batch_size"] == 64


def test_megatron_script_errors(ts):
    with pytest.raises(ValueError) as e:
        ts.simulate(megatron_script_args="1 2")
    assert e.value.field == "megatron_script_args"
    with pytest.raises(ValueError) as e:
        ts.simulate(megatron_script="torchrun pretrain_gpt.py --num-layers '2")
    assert "megatron_script" in str(e.value)
    with pytest.raises(ValueError) as e:
        ts.simulate(megatron_script="--num-layers 2",
                    framework_config={"format": "deepspeed", "text": "{}"})
    assert e.value.field == "megatron_script"
    with pytest.raises(TypeError):
        ts.simulate(megatron_script=3)


def test_framework_config_errors(ts):
    with pytest.raises(ValueError) as e:
        ts.simulate(framework_config={"format": "fairseq", "text": ""})
    assert e.value.field == "framework_config.format"
    with pytest.raises(TypeError):
        ts.simulate(framework_config="ds_config.json")
    with pytest.raises(TypeError):
        ts.simulate(framework_config={"format": "deepspeed", "path": "x"})


def test_framework_config_accelerate_hybrid_shard_equals_the_cli_file(ts):
    """An Accelerate HYBRID_SHARD config's contents read as `--accelerate-config FILE` reads it."""
    path = os.path.join(SOURCE_DIR, "src/spec/testdata/accelerate/fsdp1_hybrid.yaml")
    with open(path) as f:
        text = f.read()
    doc = ts.simulate("llama3-8b", "h100_sxm_80gb", gbs=32,
                      framework_config={"format": "accelerate", "text": text})
    cli = cli_json("simulate", "--model", "llama3-8b", "--hardware", "h100_sxm_80gb", "--gbs", "32",
                   "--accelerate-config", path, "--json")
    assert doc["strategy"] == cli["strategy"]
    assert doc["step_time_s"] == cli["step_time_s"]


def test_framework_profile_equals_cli_json(ts):
    """framework= is `simulate --framework`: the same report, the profile's defaults listed."""
    assert "torchtitan" in ts.framework_profiles()
    r = ts.simulate("llama3-8b", gpus=8, gbs=16, framework="torchtitan")
    assert r == cli_json("simulate", "--model", "llama3-8b", "--gpus", "8", "--gbs", "16",
                         "--framework", "torchtitan", "--json")
    assert any("torchtitan" in a["why"] for a in r["assumed"])
    with pytest.raises(ValueError, match="unknown framework profile"):
        ts.simulate("llama3-8b", framework="megatron")
