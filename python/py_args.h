// Arguments of the Python module (python/module.cc): Python objects into the library's inputs,
// and the library's JSON documents back into Python objects. Errors are raised as Python
// exceptions: ValueError with the CLI's one-line message for bad input (its `field` attribute
// names the field), TypeError for a keyword the function does not take or a value of the
// wrong Python type.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "trainsim/formats.h"
#include "trainsim/front_end.h"
#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim::python {

namespace py = pybind11;

// Raises ValueError(st.OneLine()) with `field` = st.field().
[[noreturn]] void RaiseStatus(const Status& st);
// Raises TypeError(message).
[[noreturn]] void RaiseType(const std::string& message);

template <typename T>
T Take(Result<T> r) {
  if (!r.ok()) RaiseStatus(r.status());
  return std::move(r).value();
}

// json.loads(text): a JSON document of the library as dicts, lists, str, int, float, bool, None.
py::object FromJson(const std::string& text);
// json.dumps(obj) for a dict that stands for a JSON object; `what` names the argument in the
// TypeError raised for anything else (a file path is never read).
std::string DictToJson(const py::handle& obj, std::string_view what);

// `model`: an embedded preset id (str) or a model dict (an HF config.json's keys, a SimuMax
// model, or the validation schema's model object). A string is never read as a file path.
ModelSpec ModelArg(const py::handle& model);
// `hardware`: a preset id (str) or a hardware dict (data/hardware/*.json schema); then
// `hw_override` (None or a dict of hardware fields), as the CLI's --hw-override.
HardwareSpec HardwareArg(const py::handle& hardware, const py::handle& hw_override);

// Strategy keywords (canonical keys or the CLI flags' short names, FindStrategyFieldByName)
// into canonical key -> text settings. A value None is left out (the default applies). Values
// are typed: int for an integer field, bool for a switch, int or float for a number, str (or a
// list of str, joined with ',') for text. `fn` names the function in TypeErrors.
std::map<std::string, std::string> StrategySettings(const py::dict& kwargs, std::string_view fn);

// The strategy as `simulate` builds it: the `strategy` dict (None or a strategy file's object),
// then the keywords as the CLI's flags, then the default batch (FinishStrategy); `given` gains
// the keys that a source gave.
// `fw`: a framework file's settings applied first (under the dict and the keywords), its
// batch rules checked after. `mg`: a Megatron-LM job's arguments applied first instead.
Strategy StrategyArg(const py::object& strategy, const py::dict& kwargs, std::string_view fn,
                     StrategyKeys& given, const FrameworkConfig* fw = nullptr,
                     MegatronJob* mg = nullptr);

// `framework_config`: {'format': 'deepspeed' | 'torchtitan' | 'llamafactory' | 'trl', 'text':
// the file's contents, 'deepspeed_text': the DeepSpeed config it names} (ReadFrameworkText).
FrameworkConfig FrameworkArg(const py::handle& config, int model_layers);

}  // namespace trainsim::python
