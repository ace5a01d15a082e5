// plan() and recommend() of the Python module: `trainsim plan --json` and `trainsim recommend
// --json` as dicts, through the requests every front-end builds (trainsim/front_end.h).
#pragma once

#include "py_args.h"

namespace trainsim::python {

// plan(model, hardware, *, strategy=None, hw_override=None, search=False,
// compute_optimal=False, detail=False, <plan options>, **strategy settings).
py::object PlanPy(const py::object& model, const py::object& hardware, const py::kwargs& kw);

// recommend(model, *, tokens, deadline_days=None, budget_usd=None, price_per_gpu_hour=None,
// objective="cost", dtype="bf16", gbs=None, seq=4096, gpus=None, top=10, threads=0,
// include_uncalibrated=False).
py::object RecommendPy(const py::object& model, const py::kwargs& kw);

}  // namespace trainsim::python
