// The simulate screen: the form, the report's numbers (as `trainsim simulate` prints them), the
// time breakdown, memory per stage and the event-driven step as a Gantt chart.
import { ApiError, postJson, type HardwareEntry, type ModelEntry, type Report, type SimRequest, type Trace } from "./api";
import { draw, palette } from "./charts";
import { drawGantt } from "./gantt";
import {
  DEFAULT_STATE, PRESETS, extraInput, hardwareSelect, modelSelect, readForm, strategyFromState,
  strategyInputs,
} from "./form";
import { billions, el, gib, percent, seconds, tflops, toGib, tokensPerS } from "./format";
import { writeState, type State } from "./state";

export interface Catalogue {
  models: ModelEntry[];
  hardware: HardwareEntry[];
}

// Labels of time_breakdown_s, in the text report's order and words.
const BREAKDOWN: [string, string][] = [
  ["compute", "compute (incl. recompute)"],
  ["exposed_tp_comm", "exposed TP communication"],
  ["exposed_cp_comm", "exposed CP communication"],
  ["exposed_ep_comm", "exposed EP communication"],
  ["pp_comm", "pipeline p2p"],
  ["bubble", "pipeline bubble"],
  ["exposed_dp_comm", "exposed DP / ZeRO communication"],
  ["exposed_offload", "exposed activation offload (host copies)"],
  ["optimizer", "optimizer step"],
  ["overhead", "launch / framework overhead"],
];

export function renderSimulate(root: HTMLElement, state: State, cat: Catalogue): void {
  // A link with a model keeps its blank (assumed) fields blank; a bare "/" gets the default preset.
  const s: State = state.model ? { ...state, view: "simulate" } : { ...DEFAULT_STATE, ...state, view: "simulate" };
  const form = buildForm(s, cat);
  const results = el("section", { class: "results", "aria-label": "Simulation result" });
  root.replaceChildren(el("div", { class: "split" }, form, results));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const next = readForm(form, s);
    writeState(next, true);
    void run(results, next, cat);
  });
  void run(results, s, cat);
}

function buildForm(s: State, cat: Catalogue): HTMLFormElement {
  const preset = el("select", { id: "f-preset", name: "f-preset" },
    el("option", { value: "" }, "(choose a preset)"),
    ...PRESETS.map((p, i) => el("option", { value: String(i) }, p.name)));
  const form = el("form", { class: "panel", "aria-label": "Simulation inputs" },
    el("h2", {}, "Inputs"),
    el("div", { class: "field" }, el("label", { for: "f-preset" }, "Preset"), preset),
    modelSelect(cat.models, s.model), hardwareSelect(cat.hardware, s.hardware),
    el("div", { class: "grid2" }, ...strategyInputs(s)),
    extraInput(s),
    el("button", { type: "submit", id: "run-simulate" }, "Simulate"));
  preset.addEventListener("change", () => {
    const p = PRESETS[Number(preset.value)];
    if (!p) return;
    writeState({ view: "simulate", ...p.state }, true);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  });
  return form;
}

async function run(results: HTMLElement, s: State, cat: Catalogue): Promise<void> {
  let req: SimRequest;
  try {
    req = { model: s.model, hardware: s.hardware, strategy: strategyFromState(s) };
  } catch (e) {
    results.replaceChildren(errorBox(e));
    return;
  }
  results.replaceChildren(el("p", { class: "busy", role: "status" }, "Simulating…"));
  results.setAttribute("aria-busy", "true");
  try {
    const report = await postJson<Report>("/v1/simulate", req);
    showReport(results, report, cat);
    void showTimeline(results, req);
  } catch (e) {
    results.replaceChildren(errorBox(e));
  } finally {
    results.removeAttribute("aria-busy");
  }
}

export function errorBox(e: unknown): HTMLElement {
  const msg = e instanceof Error ? e.message : String(e);
  const field = e instanceof ApiError && e.field ? ` (field: ${e.field})` : "";
  return el("p", { class: "error", role: "alert", id: "error" }, `${msg}${field}`);
}

function metric(id: string, label: string, text: string, value: number): HTMLElement {
  return el("div", { class: "metric" },
    el("dt", {}, label),
    el("dd", { id, "data-value": String(value) }, text));
}

// As the text report prints it (src/report/report_text.cc): ± half the band's width.
function bandText(r: Report): string {
  if (r.step_time_s_low === undefined || r.step_time_s_high === undefined || !r.uncertainty) return "";
  const pm = ((50 * (r.step_time_s_high - r.step_time_s_low)) / r.step_time_s).toFixed(0);
  // A run whose stack nobody named carries the stack-inferred band (docs/VALIDATION.md).
  const hint = r.uncertainty.regime === "stack-inferred"
    ? "; no framework named: --framework or a framework file narrows it" : "";
  return ` ± ${pm} %  (80 % band ${r.step_time_s_low.toFixed(4)} - ${r.step_time_s_high.toFixed(4)} s, ` +
    `${r.uncertainty.regime} regime${hint})`;
}

function showReport(results: HTMLElement, r: Report, cat: Catalogue): void {
  const st = r.strategy;
  const head = el("h2", { id: "report-title" },
    `${r.model} on ${String(st.world_size)} × ${r.hardware}`);
  const summary = el("p", { class: "strategy-line" },
    `tp ${st.tp_size} pp ${st.pp_size} vpp ${st.interleaving_size} cp ${st.cp_size} ep ${st.ep_size} dp ${st.dp} | ` +
    `zero ${st.zero_state} | seq ${st.seq_len} mbs ${st.micro_batch_size} gbs ${st.global_batch_size} ` +
    `(${r.micro_batches} micro-batches) | ${st.dtype} | recompute ${st.recompute}`);
  const host = r.host_mem;
  const fits = el("p", { id: "m-fits", class: r.fits ? "fits" : "nofit", "data-value": String(r.fits) },
    r.fits ? "Fits in GPU memory." + (host ? " Fits in host memory." : "")
      : host && !host.fits ? `Does not fit in host memory: ${host.reason ?? ""}`
        : "Does not fit in GPU memory.",
    host?.link_bound && host.fits ? ` ${host.reason ?? ""}` : "");
  const metrics = el("dl", { class: "metrics", "aria-label": "Step metrics" },
    metric("m-step", "Step time", seconds(r.step_time_s) + bandText(r), r.step_time_s),
    metric("m-mfu", "MFU", percent(r.mfu), r.mfu),
    metric("m-hfu", "HFU", percent(r.hfu), r.hfu),
    metric("m-tflops", "TFLOP/s per GPU", tflops(r.tflops_per_gpu), r.tflops_per_gpu),
    metric("m-tokens", "Tokens/s per GPU", tokensPerS(r.tokens_per_s_per_gpu), r.tokens_per_s_per_gpu),
    metric("m-peak", "Peak memory (max over stages)", gib(r.peak_mem_bytes), r.peak_mem_bytes),
    metric("m-params", "Parameters (total / active)",
      `${billions(r.params_total)} / ${billions(r.params_active)}`, r.params_total));
  const tChart = el("div", { id: "chart-breakdown", class: "chart", role: "img",
    "aria-label": "Time breakdown of the critical stage, in seconds" });
  const mChart = el("div", { id: "chart-memory", class: "chart", role: "img",
    "aria-label": "Memory per pipeline stage, stacked, in GiB" });
  const gantt = el("div", { id: "chart-gantt", class: "chart gantt", role: "img",
    "aria-label": "Event-driven step: one row per stage and stream, time in milliseconds" });
  results.replaceChildren(head, summary, fits, metrics,
    el("div", { class: "charts2" },
      el("figure", {}, el("figcaption", {}, "Time breakdown (critical stage)"), tChart, breakdownTable(r)),
      el("figure", {}, el("figcaption", {}, "Memory per stage"), mChart, memoryTable(r))),
    el("figure", {}, el("figcaption", { id: "gantt-caption" }, "Event-driven step (loading…)"), gantt),
    assumedList(r));
  drawBreakdown(tChart, r);
  drawMemory(mChart, r, cat.hardware.find((h) => h.id === r.hardware));
}

function breakdownTable(r: Report): HTMLElement {
  const rows = BREAKDOWN.map(([k, label]) => {
    const v = r.time_breakdown_s[k] ?? 0;
    return el("tr", {}, el("th", { scope: "row" }, label),
      el("td", { "data-key": k, "data-value": String(v) }, seconds(v)),
      el("td", {}, percent(v / r.step_time_s)));
  });
  return el("details", {}, el("summary", {}, "Breakdown as a table"),
    el("table", { id: "table-breakdown" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "part"), el("th", { scope: "col" }, "time"),
        el("th", { scope: "col" }, "share of step"))),
      el("tbody", {}, ...rows)));
}

// The text report's "memory per stage (GiB)" table.
function memoryTable(r: Report): HTMLElement {
  const cols: [string, (s: Report["stages"][number]) => string][] = [
    ["layers", (s) => String(s.layers)],
    ["weights", (s) => toGib(s.weight_bytes).toFixed(2)],
    ["grads", (s) => toGib(s.grad_bytes).toFixed(2)],
    ["optimizer", (s) => toGib(s.optimizer_bytes).toFixed(2)],
    ["activations (in-flight mbs)", (s) => `${toGib(s.activation_bytes).toFixed(2)} (${s.inflight_micro_batches.toFixed(1)})`],
    ["transient", (s) => toGib(s.transient_bytes).toFixed(2)],
    ["peak", (s) => toGib(s.peak_mem_bytes).toFixed(2)],
    ["reserved", (s) => toGib(s.reserved_bytes).toFixed(2)],
  ];
  return el("details", {}, el("summary", {}, "Memory per stage as a table (GiB)"),
    el("table", { id: "table-memory" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "stage"),
        ...cols.map(([h]) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...r.stages.map((s) => el("tr", {}, el("th", { scope: "row" }, `stage ${s.index}`),
        ...cols.map(([, f]) => el("td", {}, f(s))))))));
}

function drawBreakdown(host: HTMLElement, r: Report): void {
  const parts = BREAKDOWN.filter(([k]) => (r.time_breakdown_s[k] ?? 0) > 0).reverse();
  draw(host, {
    grid: { left: 210, right: 30, top: 10, bottom: 40 },
    tooltip: { trigger: "axis", valueFormatter: (v: number) => `${v.toFixed(4)} s (${percent(v / r.step_time_s)})` },
    xAxis: { type: "value", name: "seconds", nameLocation: "middle", nameGap: 25 },
    yAxis: { type: "category", data: parts.map(([, l]) => l) },
    series: [{
      type: "bar", name: "time", itemStyle: { color: palette[0] },
      data: parts.map(([k]) => r.time_breakdown_s[k]),
      label: { show: true, position: "right", formatter: (p: { value: number }) => `${p.value.toFixed(3)} s` },
    }],
  });
}

function drawMemory(host: HTMLElement, r: Report, hw: HardwareEntry | undefined): void {
  const parts: [string, (s: Report["stages"][number]) => number][] = [
    ["weights", (s) => s.weight_bytes],
    ["gradients", (s) => s.grad_bytes],
    ["optimizer", (s) => s.optimizer_bytes + (s.mirror_static_bytes ?? 0)],
    ["activations", (s) => s.activation_bytes],
    ["transient", (s) => s.transient_bytes],
    ["framework / NCCL overhead", (s) => s.reserved_bytes - s.peak_mem_bytes],
  ];
  const series = parts.map(([name, f], i) => ({
    type: "bar", name, stack: "mem", itemStyle: { color: palette[i] },
    data: r.stages.map((s) => Number(toGib(f(s)).toFixed(3))),
    ...(i === 0 && hw ? {
      markLine: {
        symbol: "none", lineStyle: { color: "#c00", type: "dashed" },
        label: { formatter: `HBM ${toGib(hw.hbm_bytes).toFixed(0)} GiB`, position: "insideEndTop" },
        data: [{ yAxis: toGib(hw.hbm_bytes) }],
      },
    } : {}),
  }));
  draw(host, {
    grid: { left: 60, right: 20, top: 60, bottom: 30 },
    legend: { top: 0, left: 0, itemWidth: 14, itemGap: 8 },
    tooltip: { trigger: "axis", valueFormatter: (v: number) => `${v.toFixed(2)} GiB` },
    xAxis: { type: "category", data: r.stages.map((s) => `stage ${s.index}`) },
    yAxis: { type: "value", name: "GiB", max: hw ? Math.ceil(Math.max(toGib(hw.hbm_bytes),
      ...r.stages.map((s) => toGib(s.reserved_bytes)))) : undefined },
    series,
  });
}

function assumedList(r: Report): HTMLElement {
  if (!r.assumed.length) return el("p", {}, "Nothing assumed: every setting was given.");
  return el("details", { class: "assumed" },
    el("summary", {}, `Assumed (${r.assumed.length} settings not given)`),
    el("table", {},
      el("thead", {}, el("tr", {}, ...["field", "value", "why"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...r.assumed.map((a) =>
        el("tr", {}, el("td", {}, a.field), el("td", {}, a.value), el("td", {}, a.why))))));
}

async function showTimeline(results: HTMLElement, req: SimRequest): Promise<void> {
  const host = results.querySelector<HTMLElement>("#chart-gantt");
  const caption = results.querySelector<HTMLElement>("#gantt-caption");
  if (!host || !caption) return;
  try {
    const trace = await postJson<Trace>("/v1/timeline", req);
    if (!host.isConnected) return;
    caption.textContent = drawGantt(host, trace);
  } catch (e) {
    caption.textContent = "Event-driven step";
    host.replaceWith(errorBox(e));
  }
}
