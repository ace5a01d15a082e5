#include "trainsim/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "trainsim/limits.h"
#include "trainsim/trainsim.h"
#include "util/parse_number.h"

namespace trainsim {

Result<std::vector<SweepSystem>> ExpandSystems(const std::vector<std::string>& hardware,
                                               const std::vector<std::string>& vary) {
  std::vector<SweepSystem> bases;
  for (const std::string& id : hardware) {
    auto hw = LoadHardware(id);
    if (!hw.ok()) return hw.status();
    bases.push_back({id, hw.value()});
  }
  return ExpandSystems(bases, vary);
}

namespace {

// One --vary item "field=v1,v2": the field and its values, split and counted before any grid is
// built.
struct Vary {
  std::string field;
  std::vector<std::string> values;
};

Result<std::vector<Vary>> SplitVary(const std::vector<std::string>& vary, size_t bases) {
  std::vector<Vary> out;
  double points = static_cast<double>(bases);
  for (const std::string& v : vary) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::Invalid("vary", "expected field=v1,v2,... got '" + v + "'");
    Vary item{v.substr(0, eq), {}};
    const std::string list = v.substr(eq + 1);
    if (list.empty()) return Status::Invalid("vary", item.field + ": give at least one value");
    // An empty item (1,,2 or a trailing comma) is refused, not skipped: it is a lost value.
    std::istringstream in(list);
    for (std::string x; std::getline(in, x, ',');) {
      if (x.empty())
        return Status::Invalid("vary", item.field + ": an empty value in '" + list + "'");
      item.values.push_back(x);
    }
    if (list.back() == ',')
      return Status::Invalid("vary", item.field + ": an empty value in '" + list + "'");
    points *= static_cast<double>(item.values.size());
    if (points > static_cast<double>(limits::kMaxSweepPoints))
      return Status::Invalid("vary", "the grid has more than " +
                                         std::to_string(limits::kMaxSweepPoints) +
                                         " hardware variants (the sweep limit)");
    out.push_back(std::move(item));
  }
  return out;
}

// The override {"field": value} for one value, built as JSON (never pasted as text): a number
// when the value parses as one, else a string. A dotted field sets a nested key
// ("efficiency.gemm_max", "peak_tflops.bf16").
std::string OverrideJson(const std::string& field, const std::string& value) {
  nlohmann::json v;
  if (std::optional<double> x = util::ParseDouble(value))
    v = *x;
  else
    v = value;
  std::vector<std::string> path;
  std::istringstream in(field);
  for (std::string k; std::getline(in, k, '.');) path.push_back(k);
  for (auto it = path.rbegin(); it != path.rend(); ++it) v = nlohmann::json{{*it, v}};
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // bad UTF-8: U+FFFD
}

Status ApplyVaryValue(SweepSystem& n, const std::string& field, const std::string& x) {
  if (field != "peak_scale") return ApplyHardwareOverrides(n.hw, OverrideJson(field, x), "vary");
  // peak_scale scales the peak of every dtype.
  const std::optional<double> parsed = util::ParseDouble(x);  // decimal only, no hex
  const double f = parsed.value_or(0);
  if (!(f >= 1e-3) || f > 1e6)
    return Status::Invalid("vary", "peak_scale: must be in [0.001, 1e6], got '" + x + "'");
  for (double* p : {&n.hw.peak_bf16_flops, &n.hw.peak_fp16_flops, &n.hw.peak_fp8_flops,
                    &n.hw.peak_fp4_flops, &n.hw.peak_fp32_flops})
    *p *= f;
  return ValidateHardware(n.hw).WithContext("vary: peak_scale " + x);
}

}  // namespace

Result<std::vector<SweepSystem>> ExpandSystems(const std::vector<SweepSystem>& bases,
                                               const std::vector<std::string>& vary) {
  auto items = SplitVary(vary, bases.size());
  if (!items.ok()) return items.status();
  std::vector<SweepSystem> out;
  for (const SweepSystem& base : bases) {
    std::vector<SweepSystem> cur{base};
    for (const Vary& item : items.value()) {
      std::vector<SweepSystem> next;
      for (const SweepSystem& s : cur)
        for (const std::string& x : item.values) {
          SweepSystem n = s;
          if (Status st = ApplyVaryValue(n, item.field, x); !st.ok()) return st;
          n.label += " " + item.field + "=" + x;
          next.push_back(n);
        }
      cur = next;
    }
    out.insert(out.end(), cur.begin(), cur.end());
  }
  return out;
}

Result<std::vector<SweepPoint>> Sweep(const ModelSpec& m, const std::vector<SweepSystem>& systems,
                                      const std::vector<int>& gpus, SearchOptions o) {
  if (static_cast<double>(systems.size()) * static_cast<double>(gpus.size()) >
      static_cast<double>(limits::kMaxSweepPoints))
    return Status::Invalid("gpus", "the sweep has " + std::to_string(systems.size()) +
                                       " systems x " + std::to_string(gpus.size()) +
                                       " GPU counts; at most " +
                                       std::to_string(limits::kMaxSweepPoints) + " points");
  std::vector<SweepPoint> out;
  o.top_k = 1;
  for (const SweepSystem& sys : systems)
    for (int g : gpus) {
      o.gpus = g;
      auto r = Search(m, sys.hw, o);
      if (!r.ok()) return r.status();
      SweepPoint p;
      p.system = sys.label;
      p.gpus = g;
      p.evaluated = r->evaluated;
      p.feasible = !r->top.empty();
      p.complete = r->complete;
      if (p.feasible) {
        p.best = r->top.front();
        auto rep = Simulate(m, sys.hw, p.best.strategy);
        if (rep.ok()) p.time = rep->time;
      }
      out.push_back(p);
      if (!p.complete) return out;
    }
  return out;
}

std::string SweepCsv(const std::vector<SweepPoint>& points) {
  std::string o =
      "system,gpus,feasible,strategy,step_time_s,mfu,tokens_per_s_per_gpu,peak_mem_gib,"
      "usd_per_million_tokens,compute_s,exposed_tp_comm_s,exposed_cp_comm_s,exposed_ep_comm_s,"
      "pp_comm_s,bubble_s,exposed_dp_comm_s,optimizer_s,overhead_s\n";
  for (const SweepPoint& p : points) {
    const TimeBreakdown& t = p.time;
    o += fmt::format(
        "\"{}\",{},{},\"{}\",{:.6g},{:.4f},{:.1f},{:.3f},{:.4f},{:.6g},{:.6g},{:.6g},{:.6g},"
        "{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n",
        p.system, p.gpus, p.feasible ? 1 : 0, p.feasible ? DescribeStrategy(p.best.strategy) : "",
        p.best.step_time_s, p.best.mfu, p.best.tokens_per_s_per_gpu,
        p.best.peak_mem_bytes / (1 << 30), p.best.usd_per_million_tokens, t.compute_s,
        t.exposed_tp_comm_s, t.exposed_cp_comm_s, t.exposed_ep_comm_s, t.pp_comm_s, t.bubble_s,
        t.exposed_dp_comm_s, t.optimizer_s, t.overhead_s);
  }
  return o;
}

namespace {

const char* kColors[] = {"#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4",
                         "#42d4f4", "#f032e6", "#9a6324", "#800000", "#000075"};

std::string Header(double w, double h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n<text x=\"70\" y=\"24\" font-size=\"15\">{}</text>\n",
      w, h, title);
}

}  // namespace

std::string SweepScalingSvg(const std::vector<SweepPoint>& points, const std::string& title) {
  constexpr double W = 900, H = 520, L = 70, R = 330, T = 40, B = 50;
  double gmin = 1e30, gmax = 0, tmin = 1e30, tmax = 0;
  std::map<std::string, std::vector<const SweepPoint*>> lines;
  std::vector<std::string> order;
  for (const SweepPoint& p : points) {
    if (!lines.count(p.system)) order.push_back(p.system);
    lines[p.system];
    if (!p.feasible) continue;
    lines[p.system].push_back(&p);
    gmin = std::min(gmin, double(p.gpus));
    gmax = std::max(gmax, double(p.gpus));
    tmin = std::min(tmin, p.best.step_time_s);
    tmax = std::max(tmax, p.best.step_time_s);
  }
  std::string o = Header(W, H, title);
  if (gmax <= 0) return o + "<text x=\"70\" y=\"80\">no feasible point</text>\n</svg>\n";
  const double g0 = std::log2(gmin), g1 = std::max(std::log2(gmax), g0 + 1);
  const double t0 = std::floor(std::log10(tmin)),
               t1 = std::max(std::ceil(std::log10(tmax)), t0 + 1);
  auto X = [&](double g) { return L + (std::log2(g) - g0) / (g1 - g0) * (W - L - R); };
  auto Y = [&](double t) { return H - B - (std::log10(t) - t0) / (t1 - t0) * (H - T - B); };
  for (double e = g0; e <= g1 + 1e-9; e += 1) {
    const double g = std::pow(2, e);
    o += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
        X(g), T, H - B, H - B + 16, g);
  }
  for (double e = t0; e <= t1 + 1e-9; e += 1) {
    const double t = std::pow(10, e);
    o += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        L, Y(t), W - R, L - 6, Y(t) + 4, t);
  }
  int i = 0;
  for (const std::string& name : order) {
    const char* color = kColors[i % 10];
    std::string pts;
    for (const SweepPoint* p : lines[name]) {
      pts += fmt::format("{:.1f},{:.1f} ", X(p->gpus), Y(p->best.step_time_s));
      o += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{} on {} GPUs: "
          "{:.3g} s ({})</title></circle>\n",
          X(p->gpus), Y(p->best.step_time_s), color, name, p->gpus, p->best.step_time_s,
          DescribeStrategy(p->best.strategy));
    }
    o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                     pts, color);
    o += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"{}\">{}</text>\n",
        W - R + 15, T + 10 + 20 * i, color, W - R + 32, T + 21 + 20 * i, name);
    ++i;
  }
  o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">GPUs</text>\n",
                   (L + W - R) / 2, H - 12);
  o += fmt::format(
      "<text x=\"18\" y=\"{0:.1f}\" transform=\"rotate(-90 18 {0:.1f})\" "
      "text-anchor=\"middle\">best step time (s)</text>\n</svg>\n",
      (T + H - B) / 2);
  return o;
}

std::string SweepBreakdownSvg(const std::vector<SweepPoint>& points, const std::string& title) {
  const double bar = 26, gap = 8, L = 330, W = 1000, T = 60;
  const double H = T + points.size() * (bar + gap) + 40;
  std::string o = Header(W, H, title);
  const char* names[] = {"compute", "exposed TP", "exposed CP", "exposed EP", "PP p2p",
                         "bubble",  "exposed DP", "optimizer",  "overhead"};
  for (int k = 0; k < 9; ++k)
    o += fmt::format(
        "<rect x=\"{}\" y=\"34\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"43\">{}</text>\n",
        L + k * 72, kColors[k], L + 13 + k * 72, names[k]);
  double y = T;
  for (const SweepPoint& p : points) {
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{} x{}</text>\n", L - 8,
                     y + bar * 0.65, p.system, p.gpus);
    const TimeBreakdown& t = p.time;
    const double parts[] = {t.compute_s,         t.exposed_tp_comm_s, t.exposed_cp_comm_s,
                            t.exposed_ep_comm_s, t.pp_comm_s,         t.bubble_s,
                            t.exposed_dp_comm_s, t.optimizer_s,       t.overhead_s};
    double total = 0;
    for (double x : parts) total += x;
    double x = L;
    for (int k = 0; k < 9 && total > 0; ++k) {
      const double w = parts[k] / total * (W - L - 20);
      o += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\">"
          "<title>{}: {:.3g} s</title></rect>\n",
          x, y, w, bar, kColors[k], names[k], parts[k]);
      x += w;
    }
    if (!p.feasible)
      o += fmt::format("<text x=\"{}\" y=\"{:.1f}\">no strategy fits</text>\n", L + 4,
                       y + bar * 0.65);
    y += bar + gap;
  }
  return o + "</svg>\n";
}

}  // namespace trainsim
