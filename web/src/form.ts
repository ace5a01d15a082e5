// The simulate screen's inputs: model, hardware and the strategy keys a person sets most, each
// bound to one key of the URL state and one key of the strategy file (docs/INPUTS.md). A blank
// field is not sent, so the simulator assumes it and the report lists it under "Assumed".
import type { HardwareEntry, ModelEntry, StrategyFile } from "./api";
import { el } from "./format";
import type { State } from "./state";

export interface Field {
  state: string; // key in the URL fragment
  key: string; // key in the strategy file
  label: string;
  kind: "int" | "select";
  options?: string[]; // for selects; "" = not given (assumed)
  hint?: string;
}

export const STRATEGY_FIELDS: Field[] = [
  { state: "gpus", key: "world_size", label: "GPUs", kind: "int" },
  { state: "tp", key: "tp_size", label: "Tensor parallel (tp)", kind: "int" },
  { state: "pp", key: "pp_size", label: "Pipeline parallel (pp)", kind: "int" },
  { state: "vpp", key: "interleaving_size", label: "Virtual stages (vpp)", kind: "int" },
  { state: "cp", key: "cp_size", label: "Context parallel (cp)", kind: "int" },
  { state: "ep", key: "ep_size", label: "Expert parallel (ep)", kind: "int" },
  { state: "mbs", key: "micro_batch_size", label: "Micro-batch (sequences)", kind: "int" },
  { state: "gbs", key: "global_batch_size", label: "Global batch (sequences)", kind: "int" },
  { state: "seq", key: "seq_len", label: "Sequence length (tokens)", kind: "int" },
  { state: "zero", key: "zero_state", label: "ZeRO stage", kind: "select", options: ["", "0", "1", "2", "3"] },
  {
    state: "recompute", key: "recompute", label: "Recompute", kind: "select",
    options: ["", "none", "selective", "full"],
  },
  {
    state: "dtype", key: "dtype", label: "GEMM precision", kind: "select",
    options: ["", "bf16", "fp16", "fp8", "mxfp8", "nvfp4"],
  },
  {
    state: "schedule", key: "pipeline_schedule", label: "Pipeline schedule", kind: "select",
    options: ["", "1f1b", "interleaved_1f1b", "gpipe", "zb_h1", "dualpipe"],
  },
  {
    state: "sp", key: "enable_sequence_parallel", label: "Sequence parallel", kind: "select",
    options: ["", "true", "false"],
  },
];

// Named starting points; the first is what "/" shows without a click.
export const PRESETS: { name: string; state: State }[] = [
  {
    name: "Llama-3-8B on 8 × H100, tp 1 pp 2",
    state: { model: "llama3-8b", hardware: "h100_sxm_80gb", gpus: "8", tp: "1", pp: "2", mbs: "1", gbs: "32", seq: "4096" },
  },
  {
    name: "Llama-3-70B on 64 × H100, tp 8 pp 4 vpp 5 (make demo)",
    state: {
      model: "llama3-70b", hardware: "h100_sxm_80gb", gpus: "64", tp: "8", pp: "4", vpp: "5",
      mbs: "1", gbs: "128", seq: "8192", recompute: "selective",
    },
  },
  {
    name: "Mixtral-8x7B on 64 × H100, tp 2 pp 4 ep 8",
    state: { model: "mixtral-8x7b", hardware: "h100_sxm_80gb", gpus: "64", tp: "2", pp: "4", ep: "8", mbs: "1", gbs: "256", seq: "4096" },
  },
  {
    name: "Llama-3.1-405B on 1,024 × H100, tp 8 pp 16 vpp 4",
    state: {
      model: "llama3.1-405b", hardware: "h100_sxm_80gb", gpus: "1024", tp: "8", pp: "16", vpp: "4",
      mbs: "1", gbs: "1024", seq: "8192", recompute: "selective",
    },
  },
  {
    name: "Llama-3-8B on 8 × B200, fp8",
    state: { model: "llama3-8b", hardware: "b200_sxm_180gb", gpus: "8", tp: "1", pp: "1", mbs: "2", gbs: "64", seq: "8192", dtype: "fp8" },
  },
];

export const DEFAULT_STATE: State = PRESETS[0].state;

// The strategy file the form describes: typed values of the filled fields, then the "extra"
// JSON (other strategy keys, e.g. from a search result) under them.
export function strategyFromState(s: State): StrategyFile {
  let extra: StrategyFile = {};
  if (s.extra) {
    const parsed: unknown = JSON.parse(s.extra);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("other strategy keys: must be a JSON object");
    extra = parsed as StrategyFile;
  }
  const out: StrategyFile = { ...extra };
  for (const f of STRATEGY_FIELDS) {
    const v = s[f.state];
    if (v === undefined || v === "") continue;
    if (f.kind === "int" || f.key === "zero_state") out[f.key] = Number(v);
    else if (v === "true" || v === "false") out[f.key] = v === "true";
    else out[f.key] = v;
  }
  return out;
}

// The state that reproduces a strategy file (a search candidate): the form's keys go to their
// fields, the rest (non-null) to "extra".
export function stateFromStrategy(file: StrategyFile, base: State): State {
  const s: State = { model: base.model, hardware: base.hardware };
  const extra: StrategyFile = {};
  const byKey = new Map(STRATEGY_FIELDS.map((f) => [f.key, f]));
  for (const [k, v] of Object.entries(file)) {
    if (v === null || k === "dp") continue;
    const f = byKey.get(k);
    if (f) s[f.state] = String(v);
    else extra[k] = v;
  }
  if (Object.keys(extra).length) s.extra = JSON.stringify(extra);
  return s;
}

function select(id: string, options: [string, string][], value: string): HTMLSelectElement {
  const sel = el("select", { id, name: id });
  for (const [v, text] of options) sel.append(el("option", { value: v }, text));
  sel.value = value;
  return sel;
}

function labelled(id: string, label: string, input: HTMLElement): HTMLElement {
  return el("div", { class: "field" }, el("label", { for: id }, label), input);
}

export function modelSelect(models: ModelEntry[], value: string): HTMLElement {
  const opts: [string, string][] = models.map((m) => [
    m.id, `${m.id} (${(m.params_total / 1e9).toFixed(1)} B params)`,
  ]);
  if (!models.some((m) => m.id === value)) opts.unshift([value, value]);
  return labelled("f-model", "Model", select("f-model", opts, value));
}

export function hardwareSelect(hw: HardwareEntry[], value: string): HTMLElement {
  const opts: [string, string][] = hw.map((h) => [
    h.id, `${h.id} (${(h.hbm_bytes / 1024 ** 3).toFixed(0)} GiB)`,
  ]);
  if (!hw.some((h) => h.id === value)) opts.unshift([value, value]);
  return labelled("f-hardware", "Hardware (per GPU)", select("f-hardware", opts, value));
}

export function strategyInputs(s: State): HTMLElement[] {
  return STRATEGY_FIELDS.map((f) => {
    const id = `f-${f.state}`;
    if (f.kind === "select") {
      const opts: [string, string][] = (f.options ?? []).map((o) => [o, o === "" ? "(assumed)" : o]);
      if (s[f.state] && !f.options?.includes(s[f.state])) opts.push([s[f.state], s[f.state]]);
      return labelled(id, f.label, select(id, opts, s[f.state] ?? ""));
    }
    const input = el("input", { id, name: id, type: "number", min: "1", step: "1", placeholder: "(assumed)" });
    input.value = s[f.state] ?? "";
    return labelled(id, f.label, input);
  });
}

export function extraInput(s: State): HTMLElement {
  const ta = el("textarea", { id: "f-extra", name: "f-extra", rows: "4", spellcheck: "false",
    placeholder: '{"overlap_grad_reduce": false}' });
  ta.value = s.extra ?? "";
  const d = el("details", {},
    el("summary", {}, "Other strategy keys (JSON)"),
    labelled("f-extra", "Any strategy-file key (trainsim schema strategy)", ta));
  if (s.extra) d.open = true;
  return d;
}

// Reads the form back into a state (the view and anything else are kept).
export function readForm(form: HTMLElement, base: State): State {
  const s: State = { view: base.view ?? "simulate" };
  const value = (id: string) =>
    (form.querySelector(`#${id}`) as HTMLInputElement | HTMLSelectElement | null)?.value.trim() ?? "";
  s.model = value("f-model");
  s.hardware = value("f-hardware");
  for (const f of STRATEGY_FIELDS) s[f.state] = value(`f-${f.state}`);
  s.extra = value("f-extra");
  return s;
}
