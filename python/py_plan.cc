#include "py_plan.h"

#include <string>

#include "trainsim/front_end.h"
#include "trainsim/plan.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"

namespace trainsim::python {
namespace {

// Removes `name` from kw and returns it (None when absent).
py::object Pop(py::dict& kw, const char* name) {
  if (!kw.contains(name)) return py::none();
  py::object v = kw[name];
  PyDict_DelItemString(kw.ptr(), name);
  return v;
}

double Number(const py::object& v, const std::string& name) {
  if (py::isinstance<py::bool_>(v) ||
      !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
    RaiseType(name + ": expected int or float, got " +
              std::string(py::str(v.get_type().attr("__name__"))));
  return v.cast<double>();
}

bool Flag(const py::object& v, const std::string& name) {
  if (v.is_none()) return false;
  if (!py::isinstance<py::bool_>(v)) RaiseType(name + ": expected bool");
  return v.cast<bool>();
}

int Int(const py::object& v, const std::string& name, int none_value) {
  if (v.is_none()) return none_value;
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v))
    RaiseType(name + ": expected int");
  return v.cast<int>();
}

std::string Text(const py::object& v, const std::string& name, const char* none_value) {
  if (v.is_none()) return none_value;
  if (!py::isinstance<py::str>(v)) RaiseType(name + ": expected str");
  return v.cast<std::string>();
}

std::optional<double> MaybeNumber(const py::object& v, const std::string& name) {
  return v.is_none() ? std::nullopt : std::optional<double>(Number(v, name));
}

}  // namespace

py::object PlanPy(const py::object& model, const py::object& hardware, const py::kwargs& kwargs) {
  py::dict kw(kwargs);  // a copy: the plan's keywords are taken out, the rest are the strategy's
  PlanRequest req;
  for (std::string_view name : PlanOptionNames()) {
    const std::string key(name);
    const py::object v = Pop(kw, key.c_str());
    if (!v.is_none())
      if (Status st = SetPlanOption(req, name, Number(v, key)); !st.ok()) RaiseStatus(st);
  }
  req.search = Flag(Pop(kw, "search"), "search");
  req.compute_optimal = Flag(Pop(kw, "compute_optimal"), "compute_optimal");
  req.detail = Flag(Pop(kw, "detail"), "detail");
  const py::object strategy = Pop(kw, "strategy"), hw_override = Pop(kw, "hw_override");
  // As simulate(): the hardware, the strategy, then the model (the CLI's order).
  const HardwareSpec hw = HardwareArg(hardware, hw_override);
  StrategyKeys given;
  Strategy finished = StrategyArg(strategy, kw, "plan", given);
  const ModelSpec m = ModelArg(model);
  Result<std::string> text = std::string();
  {
    py::gil_scoped_release release;
    SimOptions opt;
    opt.detail = true;  // the plan's energy split reads the per-layer table
    auto step = SimulateWithAssumptions(m, hw, finished, given, opt);
    if (!step.ok()) {
      text = step.status();
    } else {
      WidenForInferredStack(step.value(),
                            finished);  // no framework named, as the CLI's plan without one
      auto run = PlanStep(m, hw, finished, std::move(step).value(), req);
      text = run.ok() ? Result<std::string>(PlannedRunJson(run.value(), m, hw))
                      : Result<std::string>(run.status());
    }
  }
  return FromJson(Take(std::move(text)));
}

py::object RecommendPy(const py::object& model, const py::kwargs& kwargs) {
  py::dict kw(kwargs);
  RecommendRequest req;
  const py::object tokens = Pop(kw, "tokens");
  if (tokens.is_none()) RaiseType("recommend() missing the keyword argument 'tokens'");
  req.tokens = Number(tokens, "tokens");
  req.deadline_days = MaybeNumber(Pop(kw, "deadline_days"), "deadline_days");
  req.budget_usd = MaybeNumber(Pop(kw, "budget_usd"), "budget_usd");
  req.price_per_gpu_hour = MaybeNumber(Pop(kw, "price_per_gpu_hour"), "price_per_gpu_hour");
  req.objective = Text(Pop(kw, "objective"), "objective", "cost");
  req.dtype = Text(Pop(kw, "dtype"), "dtype", "bf16");
  req.gbs = Int(Pop(kw, "gbs"), "gbs", 0);
  req.seq = Int(Pop(kw, "seq"), "seq", 4096);
  req.top = Int(Pop(kw, "top"), "top", 10);
  req.threads = Int(Pop(kw, "threads"), "threads", 0);
  req.include_uncalibrated = Flag(Pop(kw, "include_uncalibrated"), "include_uncalibrated");
  const py::object gpus = Pop(kw, "gpus");
  if (!gpus.is_none()) {
    if (py::isinstance<py::int_>(gpus)) {
      req.gpus.push_back(Int(gpus, "gpus", 0));
    } else {
      for (const py::handle& g : gpus)
        req.gpus.push_back(Int(py::reinterpret_borrow<py::object>(g), "gpus", 0));
    }
  }
  for (const auto& [k, v] : kw)
    RaiseType("recommend() got an unexpected keyword argument '" + std::string(py::str(k)) + "'");
  const ModelSpec m = ModelArg(model);
  const RecommendOptions o = Take(MakeRecommendOptions(req));
  const std::vector<CatalogueEntry> catalogue = Take(LoadCatalogue());
  Result<std::string> text = std::string();
  {
    py::gil_scoped_release release;
    auto r = Recommend(m, catalogue, o);
    text = r.ok() ? Result<std::string>(RecommendJson(r.value())) : Result<std::string>(r.status());
  }
  return FromJson(Take(std::move(text)));
}

}  // namespace trainsim::python
