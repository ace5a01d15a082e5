// Chrome trace-event JSON of a simulated step (the "JSON Object Format" of the Trace Event
// Format document; Perfetto and chrome://tracing open it). Times are microseconds with
// nanosecond digits, printed from integer nanoseconds so that events of one thread never overlap
// by rounding.
#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <string>

#include "trainsim/timeline.h"
#include "util/units.h"

namespace trainsim {
namespace {

long long Ns(double s) {
  return std::llround(s * 1e9);
}

void Us(fmt::memory_buffer& b, long long ns) {
  fmt::format_to(std::back_inserter(b), "{}.{:03d}", ns / 1000, static_cast<int>(ns % 1000));
}

void Name(fmt::memory_buffer& b, const TimelineEvent& e, bool chunked) {
  auto out = std::back_inserter(b);
  switch (e.op) {
    case TimelineOp::kForward:
    case TimelineOp::kBackward:
    case TimelineOp::kBackwardInput:
    case TimelineOp::kWeightGrad:
      fmt::format_to(out, "{}{}",
                     e.op == TimelineOp::kForward      ? "F"
                     : e.op == TimelineOp::kWeightGrad ? "W"
                                                       : "B",
                     e.micro_batch);
      if (chunked) fmt::format_to(out, " c{}", e.chunk);
      break;
    case TimelineOp::kForwardBackward:
      fmt::format_to(out, "F{} & B{}", e.micro_batch, e.micro_batch2);
      break;
    case TimelineOp::kP2PSend:
      fmt::format_to(out, "send {}", e.micro_batch);
      break;
    default:
      fmt::format_to(out, "{}", TimelineOpName(e.op));
      break;
  }
}

}  // namespace

std::string TimelineToChromeTrace(const Timeline& t) {
  fmt::memory_buffer b;
  auto out = std::back_inserter(b);
  fmt::format_to(out,
                 "{{\"displayTimeUnit\":\"ms\",\"otherData\":{{\"schedule\":\"{}\","
                 "\"stages\":{},\"micro_batches\":{},\"step_time_s\":{:.9g},"
                 "\"pipeline_s\":{:.9g}}},\n\"traceEvents\":[\n",
                 PipelineScheduleName(t.schedule), t.stages, t.micro_batches, t.step_time_s,
                 t.pipeline_s);
  bool used[kTimelineStreams] = {};
  for (const TimelineEvent& e : t.events) used[static_cast<int>(e.stream)] = true;
  bool first = true;
  auto sep = [&] {
    if (!first) fmt::format_to(out, ",\n");
    first = false;
  };
  for (int k = 0; k < t.stages; ++k) {
    sep();
    fmt::format_to(out,
                   "{{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":{0},\"tid\":0,"
                   "\"args\":{{\"name\":\"stage {0}\"}}}},\n"
                   "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":{0},"
                   "\"tid\":0,\"args\":{{\"sort_index\":{0}}}}}",
                   k);
    for (int s = 0; s < kTimelineStreams; ++s) {
      if (!used[s]) continue;
      fmt::format_to(out,
                     ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"name\":\"{}\"}}}}",
                     k, s, TimelineStreamName(static_cast<TimelineStream>(s)));
    }
  }
  const bool chunked = t.chunks > 1 && t.schedule != PipelineSchedule::kDualPipe;
  for (const TimelineEvent& e : t.events) {
    const long long ts = Ns(e.start_s), te = Ns(e.start_s + e.dur_s);
    sep();
    fmt::format_to(out, "{{\"name\":\"");
    Name(b, e, chunked);
    fmt::format_to(out, "\",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":", TimelineStreamName(e.stream));
    Us(b, ts);
    fmt::format_to(out, ",\"dur\":");
    Us(b, te - ts);
    fmt::format_to(out, ",\"pid\":{},\"tid\":{},\"args\":{{", e.stage, static_cast<int>(e.stream));
    bool a = false;
    auto arg_sep = [&] {
      if (a) fmt::format_to(out, ",");
      a = true;
    };
    if (e.layer_count > 0) {
      arg_sep();
      if (e.layer_count == 1)
        fmt::format_to(out, "\"layer\":\"{}\"", e.layer_begin);
      else
        fmt::format_to(out, "\"layer\":\"{}-{}\"", e.layer_begin,
                       e.layer_begin + e.layer_count - 1);
    }
    if (e.micro_batch >= 0) {
      arg_sep();
      fmt::format_to(out, "\"micro_batch\":{}", e.micro_batch);
    }
    if (e.chunk >= 0) {
      arg_sep();
      fmt::format_to(out, "\"chunk\":{}", e.chunk);
    }
    if (e.micro_batch2 >= 0) {
      arg_sep();
      fmt::format_to(out, "\"backward_micro_batch\":{},\"backward_chunk\":{}", e.micro_batch2,
                     e.chunk2);
    }
    if (e.stream == TimelineStream::kCompute) {
      arg_sep();
      fmt::format_to(out, "\"flops\":{:.6g}", e.flops);
    }
    if (e.bytes > 0) {
      arg_sep();
      fmt::format_to(out, "\"bytes\":{:.6g}", e.bytes);
    }
    fmt::format_to(out, "}}}}");
  }
  // Allocated bytes per stage as a counter track.
  for (const StageTimeline& st : t.stage_stats) {
    for (const MemorySample& m : st.memory) {
      sep();
      fmt::format_to(out, "{{\"name\":\"allocated\",\"ph\":\"C\",\"ts\":");
      Us(b, Ns(m.t_s));
      fmt::format_to(out, ",\"pid\":{},\"tid\":0,\"args\":{{\"GiB\":{:.4f}}}}}", st.stage,
                     units::BytesToGiB(m.bytes));
    }
  }
  fmt::format_to(out, "\n]}}\n");
  return fmt::to_string(b);
}

}  // namespace trainsim
