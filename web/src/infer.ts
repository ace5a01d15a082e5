// The serve screen: `trainsim infer --json` through POST /v1/infer for a model on a serving
// layout (prompt and output lengths, batch, tensor parallelism, engine, optionally a
// disaggregated prefill:decode split): TTFT, TPOT, tokens/s, the KV pool, and where the time of a
// prefill and of a decode step goes.
import { postJson } from "./api";
import { draw, palette } from "./charts";
import { hardwareSelect, modelSelect } from "./form";
import { el, seconds } from "./format";
import { errorBox, type Catalogue } from "./simulate";
import { writeState, type State } from "./state";

interface PhaseDoc {
  bound: string;
  compute_s: number;
  hbm_s: number;
  comm_s: number;
  launch_s: number;
  total_s: number;
}
// The parts of `infer --json` the screen shows (src/infer/report_json.cc).
export interface InferDoc {
  ttft_s: number;
  tpot_s: number;
  output_tokens_per_s: number;
  output_tokens_per_s_per_gpu: number;
  batch: number;
  max_concurrent_sequences: number;
  crossover_batch: number;
  fits: boolean;
  engine: string;
  launch_command: string;
  prefill: PhaseDoc;
  decode: PhaseDoc;
  memory: { weights_bytes_per_gpu: number; kv_pool_bytes_per_gpu: number; kv_bytes_per_token: number };
  assumed: { field: string; value: string; why: string }[];
}

// The options the screen edits: state key, body key (infer's flag name), label, kind.
const INFER_FIELDS: [string, string, string, "int" | "text"][] = [
  ["prompt", "prompt_len", "Prompt tokens", "int"],
  ["output", "output_len", "Output tokens", "int"],
  ["batch", "batch", "Concurrent sequences (blank: as many as fit)", "int"],
  ["itp", "tp", "Tensor parallel", "int"],
  ["igpus", "gpus", "GPUs", "int"],
  ["engine", "engine", "Engine (vllm, sglang, trtllm, transformers)", "text"],
  ["disagg", "disaggregate", "Disaggregate prefill:decode GPUs (e.g. 8:8)", "text"],
];
const DEFAULT_INFER: State = { model: "llama3-8b", hardware: "h100_sxm_80gb", prompt: "1024", output: "256" };

export function renderInfer(root: HTMLElement, state: State, cat: Catalogue): void {
  const s: State = { ...DEFAULT_INFER, ...state, view: "infer" };
  const form = buildForm(s, cat);
  const results = el("section", { class: "results", "aria-label": "Serving result" });
  root.replaceChildren(el("div", { class: "split" }, form, results));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const next = readInferForm(form, s);
    writeState(next, true);
    void run(results, next);
  });
  void run(results, s);
}

function input(id: string, label: string, value: string, kind: "int" | "text"): HTMLElement {
  const attrs: Record<string, string> = { id, name: id, placeholder: "(assumed)" };
  if (kind === "int") Object.assign(attrs, { type: "number", min: "1", step: "1" });
  else attrs.type = "text";
  const i = el("input", attrs);
  i.value = value;
  return el("div", { class: "field" }, el("label", { for: id }, label), i);
}

function buildForm(s: State, cat: Catalogue): HTMLFormElement {
  return el("form", { class: "panel", "aria-label": "Serving inputs" },
    el("h2", {}, "Serving"),
    modelSelect(cat.models, s.model), hardwareSelect(cat.hardware, s.hardware),
    ...INFER_FIELDS.map(([k, , label, kind]) => input(`f-${k}`, label, s[k] ?? "", kind)),
    el("button", { type: "submit", id: "run-infer" }, "Predict"));
}

function readInferForm(form: HTMLFormElement, base: State): State {
  const value = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement | null)?.value.trim() ?? "";
  const s: State = { ...base, view: "infer", model: value("f-model"), hardware: value("f-hardware") };
  for (const [k] of INFER_FIELDS) s[k] = value(`f-${k}`);
  return s;
}

// The POST /v1/infer body of a state: integers as numbers, text as given, blanks left out.
export function inferRequest(s: State): Record<string, unknown> {
  const body: Record<string, unknown> = { model: s.model, hardware: s.hardware };
  for (const [k, key, , kind] of INFER_FIELDS) {
    if (!s[k]) continue;
    if (kind === "text") {
      body[key] = s[k];
      continue;
    }
    const v = Number(s[k]);
    if (!Number.isInteger(v)) throw new Error(`${key}: not a whole number: ${s[k]}`);
    body[key] = v;
  }
  return body;
}

function metric(id: string, label: string, text: string, value: number | string): HTMLElement {
  return el("div", { class: "metric" }, el("dt", {}, label),
    el("dd", { id, "data-value": String(value) }, text));
}

async function run(results: HTMLElement, s: State): Promise<void> {
  results.replaceChildren(el("p", { class: "busy", role: "status" }, "Predicting…"));
  results.setAttribute("aria-busy", "true");
  try {
    showInfer(results, await postJson<InferDoc>("/v1/infer", inferRequest(s)));
  } catch (e) {
    results.replaceChildren(errorBox(e));
  } finally {
    results.removeAttribute("aria-busy");
  }
}

function ms(s: number): string {
  return `${(1000 * s).toFixed(2)} ms`;
}

function showInfer(results: HTMLElement, d: InferDoc): void {
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(2)} GiB`;
  const chart = el("div", { id: "chart-infer", class: "chart", role: "img",
    "aria-label": "Prefill and decode step time by part" });
  results.replaceChildren(
    el("h2", {}, `${d.engine}: ${Math.round(d.output_tokens_per_s).toLocaleString("en-US")} output tokens/s`),
    d.fits ? el("p", { class: "fits" }, "Weights and KV cache fit.")
      : el("p", { class: "nofit" }, "Does not fit: weights leave no room for one sequence's KV cache."),
    el("dl", { class: "metrics", "aria-label": "Serving metrics" },
      metric("i-ttft", "TTFT", ms(d.ttft_s), d.ttft_s),
      metric("i-tpot", "TPOT", ms(d.tpot_s), d.tpot_s),
      metric("i-tps", "Output tokens/s", Math.round(d.output_tokens_per_s).toLocaleString("en-US"), d.output_tokens_per_s),
      metric("i-tps-gpu", "Output tokens/s per GPU", Math.round(d.output_tokens_per_s_per_gpu).toLocaleString("en-US"),
        d.output_tokens_per_s_per_gpu),
      metric("i-batch", "Batch", String(d.batch), d.batch),
      metric("i-maxseq", "Sequences that fit", String(d.max_concurrent_sequences), d.max_concurrent_sequences),
      metric("i-weights", "Weights per GPU", gib(d.memory.weights_bytes_per_gpu), d.memory.weights_bytes_per_gpu),
      metric("i-kv", "KV pool per GPU", gib(d.memory.kv_pool_bytes_per_gpu), d.memory.kv_pool_bytes_per_gpu),
      metric("i-cross", "Compute-bound from batch", String(Math.round(d.crossover_batch)), d.crossover_batch),
      metric("i-decode-bound", "Decode step bound by", `${d.decode.bound} (${seconds(d.decode.total_s)})`,
        d.decode.bound)),
    chart,
    el("p", {}, "Launch: ", el("code", { id: "i-launch" }, d.launch_command)),
    el("details", { class: "assumed" }, el("summary", {}, `Assumed (${d.assumed.length})`),
      el("ul", {}, ...d.assumed.map((a) => el("li", {}, `${a.field} = ${a.value}: ${a.why}`)))));
  // Each part as a share of its phase's time: every kernel counts where its roofline binds it
  // (FLOPs or HBM bytes), so the four parts add up to the phase.
  const parts = (p: PhaseDoc) =>
    [p.compute_s, p.hbm_s, p.comm_s, p.launch_s].map((x) => (p.total_s > 0 ? (100 * x) / p.total_s : 0));
  draw(chart, {
    legend: { top: 0 },
    tooltip: { trigger: "axis" },
    grid: { left: 60, right: 20, top: 36, bottom: 30 },
    xAxis: { type: "category", data: ["compute", "HBM", "communication", "launch"] },
    yAxis: { type: "value", name: "% of the phase" },
    series: [
      { name: `prefill (${ms(d.prefill.total_s)})`, type: "bar", data: parts(d.prefill), itemStyle: { color: palette[0] } },
      { name: `decode step (${ms(d.decode.total_s)})`, type: "bar", data: parts(d.decode), itemStyle: { color: palette[1] } },
    ],
  });
}
