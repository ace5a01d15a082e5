// The event-driven step (POST /v1/timeline, a Chrome/Perfetto trace) as a Gantt chart: one row
// per stage and stream (compute, pp p2p, dp comm), one bar per "X" event, time in ms.
import type { Trace, TraceEvent } from "./api";
import { draw, palette } from "./charts";

interface Row {
  pid: number;
  tid: number;
  label: string;
}

// Colour by what the event is: forward, backward, weight-gradient, recompute, p2p, DP comm.
function colourOf(e: TraceEvent): string {
  if (e.cat === "pp p2p") return "#9c9c9c";
  if (e.cat === "dp comm" || e.cat === "fsdp comm") return palette[6];
  const c = e.name.charAt(0);
  if (c === "F") return palette[0];
  if (c === "B") return palette[1];
  if (c === "W") return palette[4];
  if (c === "R") return palette[3];
  return palette[5];
}

function rowsOf(events: TraceEvent[]): Row[] {
  const procs = new Map<number, string>();
  const threads = new Map<string, string>();
  for (const e of events) {
    if (e.ph !== "M") continue;
    const name = String(e.args?.name ?? "");
    if (e.name === "process_name") procs.set(e.pid, name);
    if (e.name === "thread_name") threads.set(`${e.pid}/${e.tid}`, name);
  }
  const used = new Set(events.filter((e) => e.ph === "X").map((e) => `${e.pid}/${e.tid}`));
  return [...used]
    .map((k) => k.split("/").map(Number))
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([pid, tid]) => ({
      pid, tid,
      label: `${procs.get(pid) ?? `stage ${pid}`} · ${threads.get(`${pid}/${tid}`) ?? tid}`,
    }));
}

// Draws the chart; returns its caption (schedule, stages, micro-batches, step time).
export function drawGantt(host: HTMLElement, trace: Trace): string {
  const events = trace.traceEvents ?? [];
  const rows = rowsOf(events);
  const index = new Map(rows.map((r, i) => [`${r.pid}/${r.tid}`, i]));
  const data = events
    .filter((e) => e.ph === "X")
    .map((e) => ({
      value: [index.get(`${e.pid}/${e.tid}`) ?? 0, e.ts / 1000, (e.ts + (e.dur ?? 0)) / 1000, e.name],
      itemStyle: { color: colourOf(e) },
    }));
  host.style.height = `${Math.max(220, 60 + rows.length * 26)}px`;
  const c = draw(host, {
    grid: { left: 150, right: 30, top: 10, bottom: 30 },
    tooltip: {
      formatter: (p: { value: [number, number, number, string] }) =>
        `${p.value[3]}: ${p.value[1].toFixed(3)} – ${p.value[2].toFixed(3)} ms (${(p.value[2] - p.value[1]).toFixed(3)} ms)`,
    },
    // Wheel to zoom, drag to pan.
    dataZoom: [{ type: "inside", xAxisIndex: 0, filterMode: "weakFilter" }],
    xAxis: { type: "value", name: "ms", nameLocation: "end", min: 0 },
    yAxis: { type: "category", data: rows.map((r) => r.label), inverse: true },
    series: [{
      type: "custom",
      name: "events",
      encode: { x: [1, 2], y: 0, tooltip: [1, 2] },
      data,
      renderItem: (params: unknown, api: GanttApi) => {
        void params;
        const row = api.value(0);
        const start = api.coord([api.value(1), row]);
        const end = api.coord([api.value(2), row]);
        const h = api.size([0, 1])[1] * 0.7;
        return {
          type: "rect",
          shape: { x: start[0], y: start[1] - h / 2, width: Math.max(1, end[0] - start[0]), height: h },
          style: api.style(),
        };
      },
    }],
  });
  void c;
  const o = trace.otherData ?? {};
  const step = typeof o.step_time_s === "number" ? `, step ${o.step_time_s.toFixed(4)} s` : "";
  return `Event-driven step (${String(o.schedule ?? "")}, ${String(o.stages ?? rows.length)} stages × ` +
    `${String(o.micro_batches ?? "?")} micro-batches${step})`;
}

interface GanttApi {
  value(dim: number): number;
  coord(v: [number, number]): [number, number];
  size(v: [number, number]): [number, number];
  style(): Record<string, unknown>;
}
