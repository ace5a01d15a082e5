// The Python module `trainsim` (docs/PYTHON.md): a thin client of the library's public header,
// returning the same JSON documents as the CLI's --json, as Python dicts and lists.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // list_models(): std::vector<std::string> -> list[str]

#include <optional>
#include <string>
#include <vector>

#include "py_args.h"
#include "py_infer.h"
#include "py_plan.h"
#include "py_search.h"
#include "trainsim/front_end.h"
#include "trainsim/presets.h"
#include "trainsim/results_json.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"
#include "trainsim/validate.h"
#include "trainsim/version.h"

namespace trainsim::python {
namespace {

// As `trainsim simulate --json`: the hardware (with hw_override), the strategy (the `strategy`
// dict as a strategy file, then the keywords as the CLI's flags), then the model.
// `megatron_script` (text) run with `megatron_script_args` (shell words), read as the CLI's
// --megatron-script; std::nullopt without one.
std::optional<MegatronJob> MegatronArg(const py::object& script, const py::object& args,
                                       const py::object& framework_config) {
  if (script.is_none()) {
    if (!args.is_none())
      RaiseStatus(Status::Invalid("megatron_script_args",
                                  "needs megatron_script (the script they are for)"));
    return std::nullopt;
  }
  if (!py::isinstance<py::str>(script))
    RaiseType("megatron_script: expected the script's text (str); read a file with open()");
  if (!args.is_none() && !py::isinstance<py::str>(args))
    RaiseType("megatron_script_args: expected a str (the script's arguments as a command line)");
  if (!framework_config.is_none())
    RaiseStatus(
        Status::Invalid("megatron_script", "give megatron_script or framework_config, not both"));
  return Take(ParseMegatronJob(script.cast<std::string>(),
                               args.is_none() ? std::string() : args.cast<std::string>(),
                               "megatron_script", "megatron_script_args"));
}

// The model of a simulate() call: the `model` argument (default llama3-8b); with a Megatron-LM
// script, the script's (the `model` argument, when given, checked against it).
ModelSpec SimulateModel(const py::object& model, MegatronJob* mg, Strategy& s) {
  const py::object id = model.is_none() ? py::str("llama3-8b") : model;
  if (!mg) return ModelArg(id);
  std::optional<ModelSpec> preset;
  if (!model.is_none()) preset = ModelArg(model);
  auto m = MegatronJobModel(*mg, preset ? &*preset : nullptr, s);
  if (!m.ok()) RaiseStatus(preset ? m.status().WithContext("model") : m.status());
  return std::move(m).value();
}

py::object SimulatePy(const py::object& model, const py::object& hardware,
                      const py::object& strategy, const py::object& hw_override, bool detail,
                      const py::object& framework_config, const py::object& megatron_script,
                      const py::object& megatron_script_args, const py::object& framework,
                      const py::kwargs& kw) {
  const HardwareSpec hw = HardwareArg(hardware, hw_override);
  std::optional<MegatronJob> mg =
      MegatronArg(megatron_script, megatron_script_args, framework_config);
  std::optional<ModelSpec> fw_model;
  if (!mg) fw_model = ModelArg(model.is_none() ? py::str("llama3-8b") : model);
  std::optional<FrameworkConfig> fw;
  if (!framework_config.is_none()) fw = FrameworkArg(framework_config, fw_model->layers);
  StrategyKeys given;
  Strategy finished =
      StrategyArg(strategy, kw, "simulate", given, fw ? &*fw : nullptr, mg ? &*mg : nullptr);
  const ModelSpec m = fw_model ? *fw_model : SimulateModel(model, &*mg, finished);
  std::vector<Assumption> profile;  // framework=: its profile's defaults for the rest
  bool stack_named = fw || mg;      // else the band is the stack-inferred one (CLI, REST alike)
  if (!framework.is_none()) {
    if (!py::isinstance<py::str>(framework))
      RaiseType("framework: expected a str (a framework profile id)");
    const std::string name = framework.cast<std::string>();
    profile = Take(ApplyFrameworkProfile(name, hw, finished, given));
    stack_named = stack_named || name.rfind("generic-", 0) != 0;
  }
  if (fw)
    if (Status st = ResolveFrameworkLayout(*fw, finished, hw.gpus_per_node,
                                           kw.contains("dist_opt_instances"));
        !st.ok())
      RaiseStatus(st);
  SimOptions opt;
  opt.detail = detail;
  Result<std::string> text = std::string();
  {
    py::gil_scoped_release release;
    auto rep = SimulateWithAssumptions(m, hw, finished, given, opt);
    if (rep.ok() && fw) {  // the file's notes first, as the CLI lists them
      StepReport& r = rep.value();
      r.assumed.insert(r.assumed.begin(), fw->assumed.begin(), fw->assumed.end());
      r.ignored.insert(r.ignored.end(), fw->ignored.begin(), fw->ignored.end());
    }
    if (rep.ok() && mg) AddMegatronNotes(*mg, rep.value());
    if (rep.ok()) {
      StepReport& r = rep.value();
      r.assumed.insert(r.assumed.begin(), profile.begin(), profile.end());
      if (!stack_named) WidenForInferredStack(r, finished);
    }
    text = rep.ok() ? Result<std::string>(FormatReportJson(rep.value(), m, hw, finished))
                    : Result<std::string>(rep.status());
  }
  return FromJson(Take(std::move(text)));
}

// As `trainsim validate --json FILES`, or on case dicts (the JSONL schema's objects).
py::object ValidatePy(const py::object& files, const py::object& cases) {
  if (files.is_none() == cases.is_none())
    RaiseType("validate(): give files (a path or a list of paths) or cases (a list of dicts)");
  ValidationSummary summary;
  std::string what;
  if (!files.is_none()) {
    std::vector<std::string> paths;
    if (py::isinstance<py::str>(files))
      paths.push_back(files.cast<std::string>());
    else
      for (const py::handle& f : files) paths.push_back(py::str(f));
    for (const std::string& p : paths) what += (what.empty() ? "" : ", ") + p;
    Result<ValidationSummary> res = ValidationSummary();
    {
      py::gil_scoped_release release;
      res = RunValidation(paths);
    }
    summary = Take(std::move(res));
  } else {
    std::string jsonl;
    for (const py::handle& c : cases) jsonl += DictToJson(c, "cases") + "\n";
    what = "cases";
    std::vector<CaseResult> unparsable;
    auto parsed = Take(ParseValidationCases(jsonl, "cases", &unparsable));
    py::gil_scoped_release release;
    summary = ScoreCases(parsed, std::move(unparsable));
  }
  if (summary.cases.empty())
    RaiseStatus(Status::Invalid("files", "no validation cases in " + what));
  return FromJson(ValidationJson(summary, -1));
}

// A model file (any format the CLI's --model reads), checked, as the dict simulate() takes.
py::object LoadModelPy(const std::string& path) {
  const std::string text = Take(ReadTextFile(path));
  Take(ParseModelJson(text, path));
  return FromJson(text);
}

py::object LoadHardwarePy(const std::string& path) {
  const std::string text = Take(ReadTextFile(path));
  Take(ParseHardwareJson(text, path));
  return FromJson(text);
}

}  // namespace
}  // namespace trainsim::python

PYBIND11_MODULE(trainsim, m) {
  namespace py = pybind11;
  using namespace trainsim::python;
  m.doc() =
      "trainsim: predict an LLM training step (time, MFU, memory per stage) without running it. "
      "Returns the JSON documents of the CLI's --json as dicts; see docs/PYTHON.md.";
  m.attr("__version__") = std::string(trainsim::TrainsimVersion());
  m.def("simulate", &SimulatePy, py::arg("model") = py::none(),
        py::arg("hardware") = "h100_sxm_80gb", py::kw_only(), py::arg("strategy") = py::none(),
        py::arg("hw_override") = py::none(), py::arg("detail") = false,
        py::arg("framework_config") = py::none(), py::arg("megatron_script") = py::none(),
        py::arg("megatron_script_args") = py::none(), py::arg("framework") = py::none(),
        "simulate(model=None, hardware='h100_sxm_80gb', *, strategy=None, "
        "hw_override=None, detail=False, framework_config=None, megatron_script=None, "
        "megatron_script_args=None, framework=None, **settings) -> dict\n\n"
        "framework: a framework profile id (framework_profiles()): its defaults for the "
        "settings nothing else gives, listed in 'assumed', as `simulate --framework`. "
        "One training step, as `trainsim simulate --json`. model: None is llama3-8b, or the "
        "model of megatron_script (a Megatron-LM launch script's or argument string's text, run "
        "with megatron_script_args as its $1, $2, ...; as the CLI's --megatron-script, under "
        "strategy and settings; a given model is checked against its shape arguments). "
        "model / hardware: a preset id or a "
        "dict (never a file path: see load_model). strategy: a strategy file's dict. settings: "
        "strategy keys or the CLI's short names (tp=2, pp=2, gbs=32, seq=4096, "
        "recompute='selective'; strategy_fields() lists them); None leaves a default. "
        "framework_config: {'format': 'deepspeed' | 'torchtitan' | 'llamafactory' | 'trl' | "
        "'accelerate', "
        "'text': the file's contents, 'deepspeed_text': the DeepSpeed config it names}, read as "
        "the CLI reads the file, under strategy and settings. Bad input raises ValueError with "
        "the CLI's message.");
  m.def(
      "framework_profiles", [] { return trainsim::FrameworkProfileIds(); },
      "framework_profiles() -> list[str]\n\nThe framework profile ids simulate(framework=...) "
      "takes (data/frameworks.json), as `simulate --framework`.");
  m.def("search", &SearchPy, py::arg("model") = "llama3-8b", py::arg("hardware") = "h100_sxm_80gb",
        "search(model='llama3-8b', hardware='h100_sxm_80gb', *, gbs, gpus=8, seq=4096, "
        "dtype='bf16', top=10, objective='time', memory_margin=0.05, threads=0, timeout_s=None, "
        "hw_override=None, full=False) -> list[dict]\n\n"
        "The best strategies, ranked, as `trainsim search --json`'s \"top\" (pandas.DataFrame "
        "takes the list); full=True returns the whole document (counts, rejections, Pareto "
        "front). The GIL is released while it runs; Ctrl-C cancels it; past timeout_s it "
        "returns what it has with a RuntimeWarning.");
  m.def("plan", &PlanPy, py::arg("model") = "llama3-8b", py::arg("hardware") = "h100_sxm_80gb",
        "plan(model='llama3-8b', hardware='h100_sxm_80gb', *, tokens=None, epochs=None, "
        "dataset_tokens=None, price_per_gpu_hour=None, ..., search=False, compute_optimal=False, "
        "detail=False, strategy=None, hw_override=None, **settings) -> dict\n\n"
        "The whole run of a step (steps, wall time, GPU-hours, cost, energy, CO2, goodput), as "
        "`trainsim plan --json`: the plan options are the CLI's flags ('-' written '_'), the "
        "rest are simulate()'s strategy keywords. The GIL is released while it runs.");
  m.def("recommend", &RecommendPy, py::arg("model") = "llama3-8b",
        "recommend(model='llama3-8b', *, tokens, deadline_days=None, budget_usd=None, "
        "price_per_gpu_hour=None, objective='cost', dtype='bf16', gbs=None, seq=4096, gpus=None, "
        "top=10, threads=0, include_uncalibrated=False) -> dict\n\n"
        "Hardware x GPU count x strategy ranked for a run, as `trainsim recommend --json`. The "
        "GIL is released while it runs.");
  m.def("infer", &InferPy, py::arg("model") = "llama3-8b", py::arg("hardware") = "h100_sxm_80gb",
        py::kw_only(), py::arg("hw_override") = py::none(),
        "infer(model='llama3-8b', hardware='h100_sxm_80gb', *, prompt_len, output_len, "
        "gpus=None, tp=1, pp=1, batch=1, rate=None, weight_dtype='bf16', kv_dtype=None, "
        "engine='vllm', disaggregate=None, prefill_tp=None, decode_tp=None, slo_ttft_ms=None, "
        "slo_tpot_ms=None, search=False, search_disaggregate=False, ..., hw_override=None) "
        "-> dict\n\n"
        "Serving latency and throughput (TTFT, TPOT, tokens/s, memory, the bound of each phase) "
        "as `trainsim infer --json`; the options are its flags ('-' written '_'); "
        "disaggregate='1:3' splits prefill and decode instances; search=True ranks layouts "
        "over gpus. draft_model is a preset id or a dict. The GIL is released while it runs.");
  m.def("validate", &ValidatePy, py::arg("files") = py::none(), py::kw_only(),
        py::arg("cases") = py::none(),
        "validate(files=None, *, cases=None) -> dict\n\n"
        "Scores predictions against measured runs, as `trainsim validate --json`: files is a "
        "JSONL path or a list of paths, cases a list of case dicts.");
  m.def("list_models", &trainsim::ListModelPresets, "The embedded model preset ids.");
  m.def("list_hardware", &trainsim::ListHardwarePresets, "The embedded hardware preset ids.");
  m.def("load_model", &LoadModelPy, py::arg("path"),
        "Reads a model file (HF config.json, SimuMax model JSON, ...), checks it and returns "
        "its dict for simulate(model=...).");
  m.def("load_hardware", &LoadHardwarePy, py::arg("path"),
        "Reads a hardware JSON file, checks it and returns its dict for simulate(hardware=...).");
  m.def(
      "strategy_fields", [] { return FromJson(Take(trainsim::SchemaJson("strategy")).dump()); },
      "The strategy fields (key, flag, type, default, rule, doc), as `trainsim schema "
      "strategy`. A keyword is the key or the flag without '--' ('-' written '_').");
}
