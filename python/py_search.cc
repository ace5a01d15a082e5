#include "py_search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <future>
#include <optional>

#include "trainsim/front_end.h"
#include "trainsim/results_json.h"
#include "trainsim/search.h"

namespace trainsim::python {
namespace {

// The keyword's value as an int (bool refused); TypeError / ValueError naming it.
int IntArg(const py::handle& v, const std::string& name) {
  if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
    RaiseType(name + ": expected int, got " + std::string(py::str(v.get_type().attr("__name__"))));
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow || x < INT_MIN || x > INT_MAX)
    RaiseStatus(Status::Invalid(name, "out of range, got " + std::string(py::str(v))));
  return static_cast<int>(x);
}

double NumberArg(const py::handle& v, const std::string& name) {
  if (py::isinstance<py::bool_>(v) ||
      !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
    RaiseType(name + ": expected int or float");
  return v.cast<double>();
}

bool BoolArg(const py::handle& v, const std::string& name) {
  if (!py::isinstance<py::bool_>(v)) RaiseType(name + ": expected bool");
  return v.cast<bool>();
}

std::string TextArg(const py::handle& v, const std::string& name) {
  if (!py::isinstance<py::str>(v)) RaiseType(name + ": expected str");
  return v.cast<std::string>();
}

// The workload keywords (a strategy key or its short name: gbs / global_batch_size, gpus /
// world_size, seq / seq_len, dtype) and the search's own options into `o`.
struct SearchKeywords {
  SearchOptions o;
  std::optional<double> timeout_s;
  bool full = false;
  py::object hw_override = py::none();
  std::map<std::string, std::string> workload;  // SearchWorkloadKeys -> text
};

// A workload keyword as the CLI spells it: str, int, float or bool; method and lora_rank also
// take a list or tuple of them (the values to search over).
std::string WorkloadText(const py::handle& v, const std::string& name, bool list_ok) {
  if (list_ok && (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))) {
    std::string joined;
    for (const py::handle& e : v)
      joined += (joined.empty() ? "" : ",") + WorkloadText(e, name, false);
    if (joined.empty()) RaiseStatus(Status::Invalid(name, "an empty list"));
    return joined;
  }
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return std::string(py::str(v));
  RaiseType(name + ": expected str, int, float or bool" + (list_ok ? " (or a list of them)" : ""));
  return {};
}

void ReadOption(SearchKeywords& k, const std::string& name, const py::handle& v, bool& gbs_given) {
  const StrategyField* f = FindStrategyFieldByName(name);
  const std::string_view key = f ? f->key : std::string_view();
  if (key == "global_batch_size") {
    k.o.gbs = IntArg(v, name);
    gbs_given = true;
  } else if (key == "world_size")
    k.o.gpus = IntArg(v, name);
  else if (key == "seq_len")
    k.o.seq = IntArg(v, name);
  else if (key == "dtype")
    k.o.dtype = Take(ParseDType(TextArg(v, name)));
  else if (name == "top")
    k.o.top_k = IntArg(v, name);
  else if (name == "objective")
    k.o.objective = Take(ParseObjective(TextArg(v, name)));
  else if (name == "memory_margin")
    k.o.memory_margin = NumberArg(v, name);
  else if (name == "threads")
    k.o.threads = IntArg(v, name);
  else if (name == "timeout_s")
    k.timeout_s = NumberArg(v, name);
  else if (name == "full")
    k.full = BoolArg(v, name);
  else if (name == "hw_override")
    k.hw_override = py::reinterpret_borrow<py::object>(v);
  else if (const std::string w(f ? f->key : name);
           std::find(SearchWorkloadKeys().begin(), SearchWorkloadKeys().end(), w) !=
           SearchWorkloadKeys().end())
    k.workload[w] = WorkloadText(v, name, w == "method" || w == "lora_rank");
  else
    RaiseType("search() got an unexpected keyword argument '" + name +
              "' (takes gbs, gpus, seq, dtype, top, objective, memory_margin, threads, "
              "timeout_s, hw_override, full, and the workload keys stage, method, lora_rank, "
              "lora_targets, optimizer, master_weights, ...)");
}

SearchKeywords ReadKeywords(const py::kwargs& kw) {
  SearchKeywords k;
  bool gbs_given = false;
  for (const auto& [name, v] : kw)
    if (!v.is_none()) ReadOption(k, py::str(name), v, gbs_given);
  if (!gbs_given) RaiseType("search() missing required keyword argument 'gbs'");
  if (Status st = ApplySearchWorkload(k.workload, k.o); !st.ok()) RaiseStatus(st);
  return k;
}

// Runs the search on a worker thread with the GIL released; the calling thread checks for
// Ctrl-C (KeyboardInterrupt cancels the search and is raised) every 50 ms.
Result<SearchResult> RunReleased(const ModelSpec& m, const HardwareSpec& hw, SearchOptions o) {
  std::atomic<bool> cancel{false};
  o.cancel = &cancel;
  std::optional<py::error_already_set> interrupted;
  std::optional<Result<SearchResult>> res;
  {
    py::gil_scoped_release release;
    auto done = std::async(std::launch::async, [&] { res.emplace(Search(m, hw, o)); });
    while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire acquire;
      if (!interrupted && PyErr_CheckSignals() != 0) {
        interrupted.emplace();  // fetches the pending exception (KeyboardInterrupt)
        cancel = true;
      }
    }
    done.get();
  }
  if (interrupted) throw *interrupted;
  return std::move(*res);
}

}  // namespace

py::object SearchPy(const py::object& model, const py::object& hardware, const py::kwargs& kw) {
  SearchKeywords k = ReadKeywords(kw);
  const HardwareSpec hw = HardwareArg(hardware, k.hw_override);
  const ModelSpec m = ModelArg(model);
  if (k.timeout_s) {
    if (!(*k.timeout_s >= 0 && *k.timeout_s <= 1e9))
      RaiseStatus(Status::Invalid("timeout_s", "must be in [0, 1e9] seconds"));
    k.o.deadline = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(*k.timeout_s));
  }
  const SearchResult r = Take(RunReleased(m, hw, k.o));
  if (!r.complete) {
    const std::string msg =
        "trainsim.search stopped early (" + r.stopped + "): " + SearchSummaryLine(r);
    if (PyErr_WarnEx(PyExc_RuntimeWarning, msg.c_str(), 1) != 0) throw py::error_already_set();
  }
  py::object doc = FromJson(SearchResultJson(r, -1, &hw));
  if (k.full) return doc;
  py::dict d = doc;
  py::list rows;
  if (!d.contains("top")) return rows;
  // Flat records for pandas.DataFrame: the nested strategy file stays in the full document.
  for (py::handle c : d["top"]) {
    py::dict row = py::reinterpret_borrow<py::dict>(c);
    if (row.contains("strategy_file")) PyDict_DelItemString(row.ptr(), "strategy_file");
    rows.append(row);
  }
  return rows;
}

}  // namespace trainsim::python
