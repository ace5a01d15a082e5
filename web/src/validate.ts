// The validate screen: the shipped measured runs (POST /v1/validate with no cases: the files the
// server was started with, `trainsim serve --cases`), predicted against measured step time.
import { postJson, type CaseResult, type Validation } from "./api";
import { draw, palette } from "./charts";
import { el, percent } from "./format";
import { errorBox } from "./simulate";

export async function renderValidate(root: HTMLElement): Promise<void> {
  const results = el("section", { class: "results full", "aria-label": "Validation result" },
    el("p", { class: "busy", role: "status" }, "Scoring the shipped cases…"));
  root.replaceChildren(results);
  try {
    const v = await postJson<Validation>("/v1/validate", {});
    show(results, v);
  } catch (e) {
    results.replaceChildren(errorBox(e));
  }
}

function show(results: HTMLElement, v: Validation): void {
  const scored = v.cases.filter((c) => !c.skipped && c.predicted_s && c.target_s);
  const chart = el("div", { id: "chart-validate", class: "chart tall", role: "img",
    "aria-label": "Predicted against measured step time, seconds, log scales; the diagonal is a perfect prediction" });
  results.replaceChildren(
    el("h2", {}, "Predicted vs measured step time"),
    el("dl", { class: "metrics" },
      el("div", { class: "metric" }, el("dt", {}, "Cases scored"),
        el("dd", { id: "v-cases", "data-value": String(v.cases_scored) }, String(v.cases_scored))),
      el("div", { class: "metric" }, el("dt", {}, "Step-time MAPE"),
        el("dd", { id: "v-time-mape", "data-value": String(v.time_mape) }, percent(v.time_mape))),
      el("div", { class: "metric" }, el("dt", {}, "Memory MAPE"),
        el("dd", { id: "v-mem-mape", "data-value": String(v.memory_mape) }, percent(v.memory_mape)))),
    el("p", {}, v.summary),
    el("figure", {}, el("figcaption", {}, "Each point is one published run; colour is its source family"), chart),
    worstTable(scored));
  drawScatter(chart, scored);
}

function drawScatter(host: HTMLElement, cases: CaseResult[]): void {
  const families = [...new Set(cases.map((c) => c.family))].sort();
  const xs = cases.flatMap((c) => [c.predicted_s as number, c.target_s as number]);
  // Whole decades, so the log axes read 0.1, 1, 10, 100 s.
  const lo = 10 ** Math.floor(Math.log10(Math.min(...xs))), hi = 10 ** Math.ceil(Math.log10(Math.max(...xs)));
  draw(host, {
    grid: { left: 70, right: 30, top: 60, bottom: 50 },
    legend: { top: 0, type: "scroll" },
    tooltip: {
      trigger: "item",
      formatter: (p: { data: { c: CaseResult } }) =>
        `${p.data.c.id} (${p.data.c.family})<br>measured ${p.data.c.target_s?.toFixed(3)} s, ` +
        `predicted ${p.data.c.predicted_s?.toFixed(3)} s (${percent(p.data.c.error ?? 0)})<br>${p.data.c.strategy ?? ""}`,
    },
    xAxis: { type: "log", name: "measured step time (s)", nameLocation: "middle", nameGap: 30, min: lo, max: hi },
    yAxis: { type: "log", name: "predicted step time (s)", min: lo, max: hi },
    series: [
      { type: "line", name: "predicted = measured", showSymbol: false, data: [[lo, lo], [hi, hi]],
        lineStyle: { color: "#888", type: "dashed" }, tooltip: { show: false } },
      ...families.map((f, i) => ({
        type: "scatter", name: f, symbolSize: 7, itemStyle: { color: palette[i % palette.length] },
        data: cases.filter((c) => c.family === f).map((c) => ({ value: [c.target_s, c.predicted_s], c })),
      })),
    ],
  });
}

function worstTable(cases: CaseResult[]): HTMLElement {
  const worst = [...cases].sort((a, b) => Math.abs(b.error ?? 0) - Math.abs(a.error ?? 0)).slice(0, 15);
  return el("details", {}, el("summary", {}, "The 15 largest errors"),
    el("table", { class: "wide" },
      el("thead", {}, el("tr", {}, ...["case", "family", "measured", "predicted", "error"].map((h) =>
        el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...worst.map((c) => el("tr", {},
        el("td", {}, c.id), el("td", {}, c.family), el("td", {}, `${c.target_s?.toFixed(3)} s`),
        el("td", {}, `${c.predicted_s?.toFixed(3)} s`), el("td", {}, percent(c.error ?? 0)))))));
}
