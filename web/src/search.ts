// The search screen: live progress (Server-Sent Events from /v1/search/stream), the top-K table
// and the Pareto front of step time vs peak memory; clicking a point simulates that strategy.
import { postJson, type Candidate, type SearchProgress, type SearchResult } from "./api";
import { chartOf, draw, palette } from "./charts";
import { hardwareSelect, modelSelect, stateFromStrategy } from "./form";
import { count, el, gib, percent, seconds, toGib, tokensPerS, usd } from "./format";
import { errorBox, type Catalogue } from "./simulate";
import { writeState, type State } from "./state";

const DEFAULTS: State = {
  model: "llama3-8b", hardware: "h100_sxm_80gb", gpus: "8", gbs: "32", seq: "4096",
  dtype: "bf16", top: "10", objective: "time",
};

let open: EventSource | null = null;

export function renderSearch(root: HTMLElement, state: State, cat: Catalogue): void {
  const s: State = { ...DEFAULTS, ...state, view: "search" };
  const form = buildForm(s, cat);
  const results = el("section", { class: "results", "aria-label": "Search result" });
  root.replaceChildren(el("div", { class: "split" }, form, results));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const next = readForm(form);
    writeState(next, true);
    run(results, next);
  });
  if (s.run === "1") run(results, s);
  else results.replaceChildren(el("p", {}, "Set the cluster and press Search: every legal strategy is evaluated."));
}

function numberField(id: string, label: string, value: string): HTMLElement {
  const input = el("input", { id, name: id, type: "number", min: "1", step: "1", required: "" });
  input.value = value;
  return el("div", { class: "field" }, el("label", { for: id }, label), input);
}

function selectField(id: string, label: string, options: string[], value: string): HTMLElement {
  const sel = el("select", { id, name: id }, ...options.map((o) => el("option", { value: o }, o)));
  sel.value = value;
  return el("div", { class: "field" }, el("label", { for: id }, label), sel);
}

function buildForm(s: State, cat: Catalogue): HTMLFormElement {
  return el("form", { class: "panel", "aria-label": "Search inputs" },
    el("h2", {}, "Search"),
    modelSelect(cat.models, s.model), hardwareSelect(cat.hardware, s.hardware),
    el("div", { class: "grid2" },
      numberField("s-gpus", "GPUs", s.gpus),
      numberField("s-gbs", "Global batch (sequences)", s.gbs),
      numberField("s-seq", "Sequence length (tokens)", s.seq),
      numberField("s-top", "Top K", s.top),
      selectField("s-dtype", "GEMM precision", ["bf16", "fp16", "fp8", "mxfp8", "nvfp4"], s.dtype),
      selectField("s-objective", "Rank by", ["time", "cost", "memory"], s.objective)),
    el("button", { type: "submit", id: "run-search" }, "Search"));
}

function readForm(form: HTMLElement): State {
  const v = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement).value.trim();
  return {
    view: "search", model: v("f-model"), hardware: v("f-hardware"), gpus: v("s-gpus"),
    gbs: v("s-gbs"), seq: v("s-seq"), top: v("s-top"), dtype: v("s-dtype"),
    objective: v("s-objective"), run: "1",
  };
}

function requestOf(s: State): Record<string, unknown> {
  return {
    model: s.model, hardware: s.hardware, gpus: Number(s.gpus), gbs: Number(s.gbs),
    seq: Number(s.seq), dtype: s.dtype, top: Number(s.top), objective: s.objective,
  };
}

function run(results: HTMLElement, s: State): void {
  open?.close();
  const bar = el("progress", { id: "search-progress", max: "1", value: "0", "aria-label": "Search progress" });
  const text = el("span", { id: "search-progress-text", role: "status" }, "starting…");
  results.replaceChildren(el("div", { class: "progress" }, bar, text));
  const body = requestOf(s);
  const es = new EventSource(`/v1/search/stream?q=${encodeURIComponent(JSON.stringify(body))}`);
  open = es;
  let done = false;
  es.addEventListener("progress", (ev) => {
    const p = JSON.parse((ev as MessageEvent).data) as SearchProgress;
    bar.value = p.fraction;
    text.textContent = `${percent(p.fraction)} · ${count(p.evaluated)} strategies evaluated, ` +
      `${count(p.feasible)} feasible · ${p.elapsed_s.toFixed(1)} s`;
  });
  es.addEventListener("result", (ev) => {
    done = true;
    es.close();
    showResult(results, JSON.parse((ev as MessageEvent).data) as SearchResult, s);
  });
  es.addEventListener("error", (ev) => {
    es.close();
    if (done) return;
    done = true;
    const data = (ev as MessageEvent).data as string | undefined;
    if (data) {
      const e = JSON.parse(data) as { error: string; field?: string };
      results.replaceChildren(errorBox(new Error(e.error + (e.field ? ` (field: ${e.field})` : ""))));
      return;
    }
    // The stream was refused before it began (a bad request): POST gives the reason.
    postJson<SearchResult>("/v1/search", body)
      .then((r) => showResult(results, r, s))
      .catch((e) => results.replaceChildren(errorBox(e)));
  });
}

function showResult(results: HTMLElement, r: SearchResult, s: State): void {
  const top = r.top ?? [];
  const pareto = r.pareto ?? [];
  const chart = el("div", { id: "chart-pareto", class: "chart", role: "img",
    "aria-label": "Pareto front: step time in seconds against peak memory in GiB; click a point to simulate it" });
  results.replaceChildren(
    el("p", { id: "search-summary", role: "status" }, r.summary),
    el("figure", {}, el("figcaption", {}, "Pareto front: step time vs peak memory (click a point to simulate it)"), chart),
    el("h3", {}, `Top ${top.length} by ${s.objective}`),
    topTable(top, s));
  const c = draw(chart, {
    grid: { left: 70, right: 30, top: 40, bottom: 50 },
    legend: { top: 0 },
    tooltip: { trigger: "item", formatter: (p: { data: { c: Candidate } }) => tip(p.data.c) },
    xAxis: { type: "value", name: "peak memory (GiB)", nameLocation: "middle", nameGap: 30, scale: true },
    yAxis: { type: "value", name: "step time (s)", scale: true },
    series: [
      { type: "scatter", name: `top ${top.length}`, symbolSize: 9, itemStyle: { color: palette[9] },
        data: top.map((c) => ({ value: [toGib(c.peak_mem_bytes), c.step_time_s], c })) },
      { type: "line", name: "Pareto front", symbolSize: 12, step: false, itemStyle: { color: palette[2] },
        data: pareto.map((c) => ({ value: [toGib(c.peak_mem_bytes), c.step_time_s], c })) },
    ],
  });
  c.off("click");
  c.on("click", (p) => {
    const cand = (p.data as { c?: Candidate } | undefined)?.c;
    if (cand) simulateCandidate(cand, s);
  });
}

function tip(c: Candidate): string {
  return `${c.strategy}<br>step ${seconds(c.step_time_s)} · peak ${gib(c.peak_mem_bytes)} · MFU ${percent(c.mfu)}`;
}

function simulateCandidate(c: Candidate, s: State): void {
  const file = c.strategy_file ?? {
    world_size: Number(s.gpus), tp_size: c.tp, pp_size: c.pp, interleaving_size: c.vpp, cp_size: c.cp,
    ep_size: c.ep, micro_batch_size: c.mbs, global_batch_size: Number(s.gbs), seq_len: Number(s.seq),
    zero_state: c.zero, enable_sequence_parallel: c.sp, dtype: s.dtype,
  };
  writeState({ ...stateFromStrategy(file, s), view: "simulate" }, true);
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

function topTable(top: Candidate[], s: State): HTMLElement {
  const head = ["#", "strategy", "step time", "MFU", "tokens/s per GPU", "peak memory", "USD per M tokens", ""];
  return el("table", { id: "table-top", class: "wide" },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...top.map((c, i) => {
      const b = el("button", { type: "button", "aria-label": `Simulate strategy ${i + 1}` }, "Simulate");
      b.addEventListener("click", () => simulateCandidate(c, s));
      return el("tr", {},
        el("td", {}, String(i + 1)), el("td", {}, c.strategy),
        el("td", { "data-value": String(c.step_time_s) }, seconds(c.step_time_s)),
        el("td", {}, percent(c.mfu)), el("td", {}, tokensPerS(c.tokens_per_s_per_gpu)),
        el("td", {}, gib(c.peak_mem_bytes)), el("td", {}, usd(c.usd_per_million_tokens)),
        el("td", {}, b));
    })));
}

// For tests and people at the console: the pixel of Pareto point i inside #chart-pareto.
export function paretoPixel(i: number): [number, number] | null {
  const host = document.getElementById("chart-pareto");
  const c = host ? chartOf(host) : undefined;
  if (!c) return null;
  const opt = c.getOption() as { series: { data: { value: [number, number] }[] }[] };
  const p = opt.series[1]?.data[i];
  if (!p) return null;
  return c.convertToPixel({ seriesIndex: 1 }, p.value) as [number, number];
}
