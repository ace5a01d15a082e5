// The REST API of `trainsim serve` (docs/SERVE.md): the page computes nothing itself, it shows
// what the service answers (the same documents as the CLI's --json).

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly field: string,
  ) {
    super(message);
  }
}

async function answer<T>(r: Response): Promise<T> {
  const text = await r.text();
  let doc: unknown = null;
  try {
    doc = JSON.parse(text);
  } catch {
    if (!r.ok) throw new ApiError(`${r.status} ${r.statusText}: ${text.slice(0, 200)}`, r.status, "");
    throw new ApiError(`the answer is not JSON: ${text.slice(0, 200)}`, r.status, "");
  }
  if (!r.ok) {
    const e = doc as { error?: string; field?: string };
    throw new ApiError(e.error ?? `${r.status} ${r.statusText}`, r.status, e.field ?? "");
  }
  return doc as T;
}

// `started`: a request already sent (index.html starts the catalogue's before the script runs).
export async function getJson<T>(path: string, started?: Promise<Response>): Promise<T> {
  return answer<T>(await (started ?? fetch(path)));
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const r = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return answer<T>(r);
}

export interface ModelEntry {
  id: string;
  name: string;
  params_total: number;
  params_active: number;
  layers: number;
}
export interface HardwareEntry {
  id: string;
  name: string;
  hbm_bytes: number;
  peak_bf16_flops: number;
  price_usd_per_gpu_hour: number;
}

export type StrategyFile = Record<string, unknown>;
export interface SimRequest {
  model: string;
  hardware: string;
  strategy: StrategyFile;
}

export interface Stage {
  index: number;
  layers: number;
  weight_bytes: number;
  grad_bytes: number;
  optimizer_bytes: number;
  mirror_static_bytes: number;
  activation_bytes: number;
  transient_bytes: number;
  overhead_bytes: number;
  peak_mem_bytes: number;
  reserved_bytes: number;
  inflight_micro_batches: number;
}
export interface Report {
  model: string;
  hardware: string;
  fits: boolean;
  step_time_s: number;
  step_time_s_low?: number;
  step_time_s_high?: number;
  mfu: number;
  hfu: number;
  tflops_per_gpu: number;
  tokens_per_s_per_gpu: number;
  peak_mem_bytes: number;
  params_total: number;
  params_active: number;
  micro_batches: number;
  time_breakdown_s: Record<string, number>;
  stages: Stage[];
  assumed: { field: string; value: string; why: string }[];
  strategy: StrategyFile;
  uncertainty?: {
    regime: string; rel_below: number; rel_above: number; cases: number; stack_inferred?: boolean;
  };
  // Plans that keep state on the host (docs/FINETUNE.md, "Host memory").
  host_mem?: { bytes_per_node: number; capacity_bytes_per_node: number; fits: boolean;
    link_bound: boolean; reason: string | null };
}

export interface TraceEvent {
  name: string;
  cat?: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: Record<string, unknown>;
}
export interface Trace {
  traceEvents: TraceEvent[];
  otherData?: Record<string, unknown>;
}

export interface Candidate {
  strategy: string;
  tp: number;
  pp: number;
  vpp: number;
  cp: number;
  ep: number;
  dp: number;
  mbs: number;
  zero: number;
  sp: boolean;
  step_time_s: number;
  mfu: number;
  tokens_per_s_per_gpu: number;
  peak_mem_bytes: number;
  usd_per_million_tokens: number;
  strategy_file?: StrategyFile;
}
export interface SearchResult {
  evaluated: number;
  feasible: number;
  seconds: number;
  top?: Candidate[];
  pareto?: Candidate[];
  summary: string;
}
export interface SearchProgress {
  fraction: number;
  evaluated: number;
  feasible: number;
  elapsed_s: number;
}

export interface CaseResult {
  id: string;
  family: string;
  skipped: boolean;
  predicted_s?: number;
  target_s?: number;
  error?: number;
  strategy?: string;
  regime?: string;
}
export interface Validation {
  cases: CaseResult[];
  time_mape: number;
  memory_mape: number;
  cases_scored: number;
  summary: string;
}
