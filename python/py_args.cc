#include "py_args.h"

#include <Python.h>

#include "trainsim/front_end.h"
#include "trainsim/presets.h"

namespace trainsim::python {

void RaiseStatus(const Status& st) {
  py::object err = py::reinterpret_borrow<py::object>(PyExc_ValueError)(st.OneLine());
  err.attr("field") = st.field();
  PyErr_SetObject(PyExc_ValueError, err.ptr());
  throw py::error_already_set();
}

void RaiseType(const std::string& message) {
  throw py::type_error(message);
}

py::object FromJson(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

std::string DictToJson(const py::handle& obj, std::string_view what) {
  if (!py::isinstance<py::dict>(obj))
    RaiseType(std::string(what) + ": expected a dict, got " +
              std::string(py::str(obj.get_type().attr("__name__"))));
  // allow_nan: HF configs write Infinity for "no limit", which the parsers accept.
  return py::module_::import("json").attr("dumps")(obj).cast<std::string>();
}

ModelSpec ModelArg(const py::handle& model) {
  if (py::isinstance<py::str>(model)) return Take(LoadModelPreset(model.cast<std::string>()));
  if (!py::isinstance<py::dict>(model))
    RaiseType("model: expected a preset id (str) or a dict; read a file with load_model(path)");
  return Take(ParseModelJson(DictToJson(model, "model"), "model"));
}

HardwareSpec HardwareArg(const py::handle& hardware, const py::handle& hw_override) {
  if (!py::isinstance<py::str>(hardware) && !py::isinstance<py::dict>(hardware))
    RaiseType(
        "hardware: expected a preset id (str) or a dict; read a file with load_hardware(path)");
  HardwareSpec hw = py::isinstance<py::str>(hardware)
                        ? Take(LoadHardwarePreset(hardware.cast<std::string>()))
                        : Take(ParseHardwareJson(DictToJson(hardware, "hardware"), "hardware"));
  if (!hw_override.is_none()) {
    if (!py::isinstance<py::dict>(hw_override))
      RaiseType("hw_override: expected a dict of hardware fields");
    const std::string text =
        py::module_::import("json").attr("dumps")(hw_override).cast<std::string>();
    if (Status st = ApplyHardwareOverrides(hw, text, "hw-override"); !st.ok()) RaiseStatus(st);
  }
  return hw;
}

namespace {

std::string TypeName(const py::handle& v) {
  return py::str(v.get_type().attr("__name__"));
}

// One keyword's value as the field's canonical text; TypeError naming `name` otherwise.
std::string SettingText(const StrategyField& f, const std::string& name, const py::handle& v) {
  const bool is_bool = py::isinstance<py::bool_>(v);
  const bool is_int = py::isinstance<py::int_>(v) && !is_bool;
  switch (f.kind) {
    case FieldKind::kBool:
      if (is_bool) return v.cast<bool>() ? "true" : "false";
      break;
    case FieldKind::kInt:
      if (is_int) return py::str(v);
      break;
    case FieldKind::kNumber:
      if (is_int) return py::str(v);
      if (py::isinstance<py::float_>(v)) return py::repr(v);  // shortest text that round-trips
      break;
    case FieldKind::kText:
      if (py::isinstance<py::str>(v)) return v.cast<std::string>();
      if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        std::string out;
        for (const py::handle& item : v) {
          if (!py::isinstance<py::str>(item))
            RaiseType(name + ": expected str items, got " + TypeName(item));
          out += (out.empty() ? "" : ",") + item.cast<std::string>();
        }
        return out;
      }
      break;
  }
  const char* want = f.kind == FieldKind::kBool     ? "bool"
                     : f.kind == FieldKind::kInt    ? "int"
                     : f.kind == FieldKind::kNumber ? "int or float"
                                                    : "str";
  RaiseType(name + ": expected " + want + ", got " + TypeName(v));
}

}  // namespace

std::map<std::string, std::string> StrategySettings(const py::dict& kwargs, std::string_view fn) {
  std::map<std::string, std::string> settings;
  std::map<std::string, std::string> named_by;  // canonical key -> the keyword that gave it
  for (const auto& [k, v] : kwargs) {
    const std::string name = py::str(k);
    const StrategyField* f = FindStrategyFieldByName(name);
    if (!f)
      RaiseType(std::string(fn) + "() got an unexpected keyword argument '" + name +
                "' (strategy keywords: trainsim.strategy_fields())");
    const std::string key(f->key);
    if (auto it = named_by.find(key); it != named_by.end())
      RaiseType(std::string(fn) + "(): '" + it->second + "' and '" + name + "' both set " + key +
                "; give one");
    named_by[key] = name;
    if (!v.is_none()) settings[key] = SettingText(*f, name, v);
  }
  return settings;
}

Strategy StrategyArg(const py::object& strategy, const py::dict& kwargs, std::string_view fn,
                     StrategyKeys& given, const FrameworkConfig* fw, MegatronJob* mg) {
  Strategy s;
  if (mg)
    if (Status st = ApplyMegatronJob(*mg, s, given); !st.ok())
      RaiseStatus(st.WithContext("megatron_script"));
  if (fw) {
    if (Status st = ApplyStrategySettings(s, fw->settings, false); !st.ok()) RaiseStatus(st);
    for (const auto& [key, value] : fw->settings) given.insert(key);
  }
  if (!strategy.is_none()) {
    const std::string text = DictToJson(strategy, "strategy");
    if (Status st = ApplyStrategyJson(text, "strategy", s, &given); !st.ok()) RaiseStatus(st);
  }
  const std::map<std::string, std::string> settings = StrategySettings(kwargs, fn);
  Strategy out = Take(FinishStrategy(s, settings, given));
  if (fw) {
    const bool gbs_given = settings.count("global_batch_size") > 0;
    if (Status st = ResolveFrameworkBatch(*fw, out, gbs_given); !st.ok()) RaiseStatus(st);
    if (Status st = CheckFrameworkBatch(*fw, out); !st.ok()) RaiseStatus(st);
  }
  return out;
}

FrameworkConfig FrameworkArg(const py::handle& config, int model_layers) {
  if (!py::isinstance<py::dict>(config))
    RaiseType("framework_config must be a dict {'format': ..., 'text': ...} (never a path)");
  FrameworkText ft;
  for (const auto& [k, v] : config.cast<py::dict>()) {
    const std::string key = py::str(k);
    std::string* field = key == "format"           ? &ft.format
                         : key == "text"           ? &ft.text
                         : key == "deepspeed_text" ? &ft.deepspeed_text
                                                   : nullptr;
    if (!field)
      RaiseType("framework_config: unknown key '" + key + "' (format, text, deepspeed_text)");
    if (!py::isinstance<py::str>(v)) RaiseType("framework_config['" + key + "'] must be a str");
    *field = v.cast<std::string>();
  }
  return Take(ReadFrameworkText(ft, "framework_config", model_layers, true));
}

}  // namespace trainsim::python
