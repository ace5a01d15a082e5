// SVG Gantt chart of a simulated step: a row per stage with its compute lane (F/B/W/F&B boxes,
// micro-batch numbers where they fit) and thin lanes for its communication streams; a time axis.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "trainsim/timeline.h"

namespace trainsim {
namespace {

constexpr double kLeft = 70, kPlotW = 1500, kRight = 210, kTop = 58;
constexpr double kComputeH = 20, kCommH = 4, kRowGap = 8;

const char* Fill(TimelineOp op, int chunk) {
  const bool odd = chunk > 0 && chunk % 2 == 1;
  switch (op) {
    case TimelineOp::kForward:
      return odd ? "#8fb6e0" : "#4e79a7";
    case TimelineOp::kBackward:
    case TimelineOp::kBackwardInput:
      return odd ? "#9fd68f" : "#59a14f";
    case TimelineOp::kWeightGrad:
      return odd ? "#f5dc8a" : "#e0b92f";
    case TimelineOp::kForwardBackward:
      return "#b07aa1";
    case TimelineOp::kP2PSend:
      return "#8c8c8c";
    case TimelineOp::kGradReduce:
    case TimelineOp::kParamGather:
      return "#e15759";
    case TimelineOp::kFsdpGather:
    case TimelineOp::kFsdpReduce:
      return "#f28e2b";
  }
  return "#000000";
}

// A tick step of 1, 2 or 5 times a power of ten giving about `n` ticks over `span`.
double NiceStep(double span, int n) {
  if (span <= 0) return 1;
  const double raw = span / n, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (raw <= f * mag) return f * mag;
  return 10 * mag;
}

// Where things go on the page: one row per stage (compute bar, then a lane per used
// communication stream) over a time axis.
struct SvgLayout {
  bool used[kTimelineStreams] = {};
  int lane_of[kTimelineStreams] = {-1, -1, -1, -1};
  double row_h = 0, plot_h = 0, width = 0, height = 0, span = 1;
  double X(double s) const { return kLeft + s / span * kPlotW; }
};

SvgLayout MakeLayout(const Timeline& t) {
  SvgLayout l;
  for (const TimelineEvent& e : t.events) l.used[static_cast<int>(e.stream)] = true;
  int comm_lanes = 0;
  for (int s = 1; s < kTimelineStreams; ++s)
    if (l.used[s]) l.lane_of[s] = comm_lanes++;
  l.row_h = kComputeH + (comm_lanes > 0 ? 2 + comm_lanes * (kCommH + 1) : 0) + kRowGap;
  l.plot_h = l.row_h * t.stages;
  l.width = kLeft + kPlotW + kRight;
  l.height = kTop + l.plot_h + 46;
  l.span = t.pipeline_s > 0 ? t.pipeline_s : 1;
  return l;
}

using Out = std::back_insert_iterator<fmt::memory_buffer>;

void WriteTitle(const Timeline& t, Out out) {
  double bubble = 0, busy = 0;
  for (const StageTimeline& st : t.stage_stats) {
    bubble += st.bubble_s;
    busy += st.busy_s;
  }
  const double total = t.pipeline_s * std::max(1, t.stages);
  fmt::format_to(out,
                 "<text x=\"{:.0f}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">Step timeline: "
                 "{}, {} stages x {} micro-batches; step {:.4g} s (pipeline {:.4g} s), bubble "
                 "{:.1f} %, busy {:.1f} %</text>\n",
                 kLeft, PipelineScheduleName(t.schedule), t.stages, t.micro_batches, t.step_time_s,
                 t.pipeline_s, total > 0 ? 100 * bubble / total : 0,
                 total > 0 ? 100 * busy / total : 0);
}

void WriteLegend(const Timeline& t, const SvgLayout& l, Out out) {
  const bool* used = l.used;
  struct Item {
    const char* label;
    TimelineOp op;
    bool show;
  };
  bool has[10] = {};
  for (const TimelineEvent& e : t.events) has[static_cast<int>(e.op)] = true;
  const Item items[] = {
      {"F (forward)", TimelineOp::kForward, true},
      {"B (backward)", TimelineOp::kBackward, true},
      {"W (weight grad)", TimelineOp::kWeightGrad, has[static_cast<int>(TimelineOp::kWeightGrad)]},
      {"F&amp;B (overlapped)", TimelineOp::kForwardBackward,
       has[static_cast<int>(TimelineOp::kForwardBackward)]},
      {"pp send", TimelineOp::kP2PSend, used[1]},
      {"DP comm", TimelineOp::kGradReduce, used[2]},
      {"FSDP comm", TimelineOp::kFsdpGather, used[3]},
  };
  double lx = kLeft;
  for (const Item& it : items) {
    if (!it.show) continue;
    fmt::format_to(out,
                   "<rect x=\"{:.0f}\" y=\"31\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                   "<text x=\"{:.0f}\" y=\"41\" font-size=\"11\">{}</text>\n",
                   lx, Fill(it.op, 0), lx + 16, it.label);
    lx += 30 + 6.5 * std::char_traits<char>::length(it.label);
  }
  if (t.chunks > 1 && t.schedule == PipelineSchedule::kInterleaved)
    fmt::format_to(
        out, "<text x=\"{:.0f}\" y=\"41\" font-size=\"11\">(lighter: odd chunks)</text>\n", lx);
  if (t.schedule == PipelineSchedule::kDualPipe)
    fmt::format_to(out,
                   "<text x=\"{:.0f}\" y=\"41\" font-size=\"11\">(lighter: reverse direction)"
                   "</text>\n",
                   lx);
}

void WriteRows(const Timeline& t, const SvgLayout& l, Out out) {
  const double row_h = l.row_h;
  // Labels, background, per-stage summary.
  for (int k = 0; k < t.stages; ++k) {
    const double y = kTop + k * row_h;
    fmt::format_to(out,
                   "<text x=\"{:.0f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\">stage {}"
                   "</text>\n<rect x=\"{:.0f}\" y=\"{:.1f}\" width=\"{:.0f}\" height=\"{:.0f}\" "
                   "fill=\"#f3f3f3\"/>\n",
                   kLeft - 6, y + 14, k, kLeft, y, kPlotW, kComputeH);
    if (k < static_cast<int>(t.stage_stats.size())) {
      const StageTimeline& st = t.stage_stats[k];
      const double tt = t.pipeline_s > 0 ? t.pipeline_s : 1;
      fmt::format_to(
          out,
          "<text x=\"{:.0f}\" y=\"{:.1f}\" font-size=\"10\">bubble {:.1f}%, exposed comm "
          "{:.1f}%</text>\n",
          kLeft + kPlotW + 6, y + 13, 100 * st.bubble_s / tt, 100 * st.exposed_comm_s / tt);
    }
  }
}

void WriteEvents(const Timeline& t, const SvgLayout& l, Out out) {
  const double span = l.span, row_h = l.row_h;
  for (const TimelineEvent& e : t.events) {
    const double x0 = l.X(e.start_s), w = std::max(0.3, e.dur_s / span * kPlotW);
    const double y_row = kTop + e.stage * row_h;
    const int colour_chunk = e.chunk < 0 ? 0 : e.chunk;
    if (e.stream == TimelineStream::kCompute) {
      fmt::format_to(out,
                     "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" "
                     "fill=\"{}\" stroke=\"white\" stroke-width=\"0.4\"/>\n",
                     x0, y_row, w, kComputeH, Fill(e.op, colour_chunk));
      // Micro-batch number where it fits (about 6 px per digit at font size 9).
      const int mb = e.micro_batch;
      const int digits = mb >= 100 ? 3 : mb >= 10 ? 2 : 1;
      if (mb >= 0 && w >= 5.5 * digits + 3 && e.op != TimelineOp::kForwardBackward)
        fmt::format_to(out,
                       "<text x=\"{:.2f}\" y=\"{:.1f}\" font-size=\"9\" fill=\"white\" "
                       "text-anchor=\"middle\">{}</text>\n",
                       x0 + w / 2, y_row + 13.5, mb);
      else if (e.op == TimelineOp::kForwardBackward && w >= 5.5 * (digits + 3) + 3)
        fmt::format_to(out,
                       "<text x=\"{:.2f}\" y=\"{:.1f}\" font-size=\"9\" fill=\"white\" "
                       "text-anchor=\"middle\">{}/{}</text>\n",
                       x0 + w / 2, y_row + 13.5, mb, e.micro_batch2);
    } else {
      const int lane = l.lane_of[static_cast<int>(e.stream)];
      const double y = y_row + kComputeH + 2 + lane * (kCommH + 1);
      fmt::format_to(out,
                     "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" "
                     "fill=\"{}\"/>\n",
                     x0, y, w, kCommH, Fill(e.op, 0));
    }
  }
}

void WriteTimeAxis(const Timeline& t, const SvgLayout& l, Out out) {
  const double span = l.span, plot_h = l.plot_h;
  const double ay = kTop + plot_h + 4;
  const bool ms = t.pipeline_s < 2;
  const double unit = ms ? 1e-3 : 1;
  const double step = NiceStep(span / unit, 10) * unit;
  fmt::format_to(
      out, "<line x1=\"{:.0f}\" y1=\"{:.1f}\" x2=\"{:.0f}\" y2=\"{:.1f}\" stroke=\"black\"/>\n",
      kLeft, ay, kLeft + kPlotW, ay);
  for (int i = 0; i * step <= span * (1 + 1e-9); ++i) {
    const double tx = l.X(i * step);
    fmt::format_to(out,
                   "<line x1=\"{0:.2f}\" y1=\"{1:.1f}\" x2=\"{0:.2f}\" y2=\"{2:.1f}\" "
                   "stroke=\"black\"/><text x=\"{0:.2f}\" y=\"{3:.1f}\" font-size=\"10\" "
                   "text-anchor=\"middle\">{4:.4g}</text>\n",
                   tx, ay, ay + 5, ay + 17, i * step / unit);
  }
  fmt::format_to(out,
                 "<text x=\"{:.0f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">time "
                 "({})</text>\n</svg>\n",
                 kLeft + kPlotW / 2, ay + 34, ms ? "ms" : "s");
}

}  // namespace

std::string TimelineToSvg(const Timeline& t) {
  const SvgLayout l = MakeLayout(t);
  fmt::memory_buffer b;
  auto out = std::back_inserter(b);
  fmt::format_to(out,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                 "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"Helvetica,Arial,sans-serif\">\n"
                 "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                 l.width, l.height, l.width, l.height);
  WriteTitle(t, out);
  WriteLegend(t, l, out);
  WriteRows(t, l, out);
  WriteEvents(t, l, out);
  WriteTimeAxis(t, l, out);
  return fmt::to_string(b);
}

}  // namespace trainsim
