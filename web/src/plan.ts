// The plan screen: the whole run of a step (`trainsim plan --json` through POST /v1/plan) for a
// number of tokens, a price and a deadline: wall time, cost, energy, goodput; and, when asked,
// the clusters `trainsim recommend` ranks for the same run (POST /v1/recommend).
import { postJson } from "./api";
import { DEFAULT_STATE, extraInput, hardwareSelect, modelSelect, readForm, strategyFromState, strategyInputs } from "./form";
import { count, el, percent } from "./format";
import { errorBox, type Catalogue } from "./simulate";
import { writeState, type State } from "./state";

// The parts of `plan --json` the screen shows (src/plan/plan_format.cc).
export interface PlanDoc {
  tokens: number;
  steps: number;
  step_time_s: number;
  wall_time_s: number;
  ideal_wall_time_s: number;
  gpu_hours: number;
  price_usd_per_gpu_hour: number | null;
  cost_usd: number | null;
  cost_note?: string;
  energy_kwh: number | null;
  co2_kg: number | null;
  goodput: number;
  checkpoint_interval_s: number;
  assumed: { field: string; value: string; why: string }[];
}
interface RecommendedPlan {
  hardware: string;
  gpus: number;
  wall_time_s: number;
  cost_usd: number | null;
  energy_kwh: number | null;
  goodput: number;
  step_time_s: number;
}
interface RecommendDoc {
  plans: RecommendedPlan[];
  binding: string;
}

// The plan options the screen edits: state key, body key, label.
const PLAN_FIELDS: [string, string, string][] = [
  ["tokens", "tokens", "Training tokens"],
  ["price", "price_per_gpu_hour", "Price (USD per GPU-hour; blank: the hardware's)"],
  ["deadline", "deadline_days", "Deadline (days)"],
];
const DEFAULT_PLAN: State = { tokens: "1e12" };

export function renderPlan(root: HTMLElement, state: State, cat: Catalogue): void {
  const base = state.model ? state : { ...DEFAULT_STATE, ...DEFAULT_PLAN, ...state };
  const s: State = { ...base, view: "plan" };
  const form = buildForm(s, cat);
  const results = el("section", { class: "results", "aria-label": "Plan result" });
  root.replaceChildren(el("div", { class: "split" }, form, results));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const next = readPlanForm(form, s);
    writeState(next, true);
    void run(results, next);
  });
  void run(results, s);
}

function input(id: string, label: string, value: string): HTMLElement {
  const i = el("input", { id, name: id, type: "text", inputmode: "decimal", placeholder: "(none)" });
  i.value = value;
  return el("div", { class: "field" }, el("label", { for: id }, label), i);
}

function buildForm(s: State, cat: Catalogue): HTMLFormElement {
  const rec = el("input", { id: "f-rec", name: "f-rec", type: "checkbox" });
  rec.checked = s.rec === "1";
  return el("form", { class: "panel", "aria-label": "Plan inputs" },
    el("h2", {}, "Run"),
    ...PLAN_FIELDS.map(([k, , label]) => input(`f-${k}`, label, s[k] ?? "")),
    el("div", { class: "field" }, el("label", { for: "f-rec" }, "Also rank clusters (recommend)"), rec),
    input("f-recgpus", "GPU counts to rank (comma-separated)", s.recgpus ?? "8,16,32,64"),
    el("h2", {}, "Step"),
    modelSelect(cat.models, s.model), hardwareSelect(cat.hardware, s.hardware),
    el("div", { class: "grid2" }, ...strategyInputs(s)),
    extraInput(s),
    el("button", { type: "submit", id: "run-plan" }, "Plan"));
}

function readPlanForm(form: HTMLFormElement, base: State): State {
  const s = readForm(form, base);
  const value = (id: string) => (form.querySelector(`#${id}`) as HTMLInputElement | null)?.value.trim() ?? "";
  for (const [k] of PLAN_FIELDS) s[k] = value(`f-${k}`);
  s.rec = (form.querySelector("#f-rec") as HTMLInputElement).checked ? "1" : "";
  s.recgpus = value("f-recgpus");
  return s;
}

function num(s: State, key: string): number | undefined {
  if (!s[key]) return undefined;
  const v = Number(s[key]);
  if (!Number.isFinite(v)) throw new Error(`${key}: not a number: ${s[key]}`);
  return v;
}

// The POST /v1/plan body of a state (the deadline is not a plan option: it is checked here).
export function planRequest(s: State): Record<string, unknown> {
  const body: Record<string, unknown> = { model: s.model, hardware: s.hardware, strategy: strategyFromState(s) };
  const tokens = num(s, "tokens"), price = num(s, "price");
  if (tokens !== undefined) body.tokens = tokens;
  if (price !== undefined) body.price_per_gpu_hour = price;
  return body;
}

function days(s: number): string {
  return `${(s / 86400).toFixed(2)} days`;
}
function money(x: number | null): string {
  return x === null ? "n/a" : `$${Math.round(x).toLocaleString("en-US")}`;
}

function metric(id: string, label: string, text: string, value: number | null): HTMLElement {
  return el("div", { class: "metric" }, el("dt", {}, label),
    el("dd", { id, "data-value": String(value) }, text));
}

async function run(results: HTMLElement, s: State): Promise<void> {
  results.replaceChildren(el("p", { class: "busy", role: "status" }, "Planning…"));
  results.setAttribute("aria-busy", "true");
  try {
    const deadline = num(s, "deadline");
    const p = await postJson<PlanDoc>("/v1/plan", planRequest(s));
    showPlan(results, p, deadline);
    if (s.rec === "1") await showRecommend(results, s, deadline);
  } catch (e) {
    results.append(errorBox(e));
  } finally {
    results.querySelector(".busy")?.remove();
    results.removeAttribute("aria-busy");
  }
}

function showPlan(results: HTMLElement, p: PlanDoc, deadline: number | undefined): void {
  const meets = deadline === undefined ? null : p.wall_time_s <= deadline * 86400;
  const verdict = meets === null ? el("p", {}, "No deadline given.")
    : el("p", { id: "p-deadline", class: meets ? "fits" : "nofit", "data-value": String(meets) },
      meets ? `Meets the deadline of ${deadline} days.` : `Misses the deadline of ${deadline} days.`);
  results.replaceChildren(
    el("h2", {}, `${count(p.tokens)} tokens in ${count(p.steps)} steps`),
    verdict,
    el("dl", { class: "metrics", "aria-label": "Run metrics" },
      metric("p-wall", "Wall time (with failures)", days(p.wall_time_s), p.wall_time_s),
      metric("p-ideal", "Wall time without failures", days(p.ideal_wall_time_s), p.ideal_wall_time_s),
      metric("p-cost", "Cost", money(p.cost_usd) + (p.cost_note ? ` (${p.cost_note})` : ""), p.cost_usd),
      metric("p-energy", "Energy", p.energy_kwh === null ? "n/a" : `${Math.round(p.energy_kwh).toLocaleString("en-US")} kWh`, p.energy_kwh),
      metric("p-co2", "CO2", p.co2_kg === null ? "n/a" : `${Math.round(p.co2_kg).toLocaleString("en-US")} kg`, p.co2_kg),
      metric("p-goodput", "Goodput", percent(p.goodput), p.goodput),
      metric("p-gpuh", "GPU-hours", Math.round(p.gpu_hours).toLocaleString("en-US"), p.gpu_hours),
      metric("p-step", "Step time", `${p.step_time_s.toFixed(4)} s`, p.step_time_s)),
    el("details", { class: "assumed" }, el("summary", {}, `Assumed (${p.assumed.length})`),
      el("ul", {}, ...p.assumed.map((a) => el("li", {}, `${a.field} = ${a.value}: ${a.why}`)))));
}

async function showRecommend(results: HTMLElement, s: State, deadline: number | undefined): Promise<void> {
  const body: Record<string, unknown> = { model: s.model, tokens: num(s, "tokens") ?? 1e12, top: 10 };
  if (deadline !== undefined) body.deadline_days = deadline;
  const price = num(s, "price");
  if (price !== undefined) body.price_per_gpu_hour = price;
  if (s.gbs) body.gbs = Number(s.gbs);
  if (s.recgpus) body.gpus = s.recgpus.split(",").map((g) => Number(g.trim()));
  const r = await postJson<RecommendDoc>("/v1/recommend", body);
  results.append(el("h2", {}, "Clusters ranked by cost (recommend)"),
    el("p", {}, `Binding constraint: ${r.binding}`),
    el("table", { id: "table-recommend" },
      el("thead", {}, el("tr", {}, ...["hardware", "GPUs", "wall time", "cost", "energy", "goodput"]
        .map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...r.plans.map((p) => el("tr", {},
        el("td", {}, p.hardware), el("td", {}, String(p.gpus)), el("td", {}, days(p.wall_time_s)),
        el("td", { "data-value": String(p.cost_usd) }, money(p.cost_usd)),
        el("td", {}, p.energy_kwh === null ? "n/a" : `${Math.round(p.energy_kwh)} kWh`),
        el("td", {}, percent(p.goodput)))))));
}
