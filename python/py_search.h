// search() of the Python module: the strategy search with the GIL released.
#pragma once

#include "py_args.h"

namespace trainsim::python {

// search(model, hardware, *, gbs, gpus=8, seq=4096, dtype="bf16", top=10, objective="time",
// memory_margin=0.05, threads=0, timeout_s=None, hw_override=None, full=False): the ranked
// candidates of `trainsim search --json` ("top"), or the whole document with full=True.
py::object SearchPy(const py::object& model, const py::object& hardware, const py::kwargs& kw);

}  // namespace trainsim::python
