// ECharts, only the parts the page draws (bars, scatter, lines, the custom Gantt series). Each
// chart's container carries role="img" and an aria-label, and its numbers are also in a table.
import * as echarts from "echarts/core";
import { BarChart, CustomChart, ScatterChart, LineChart } from "echarts/charts";
import {
  DataZoomInsideComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TooltipComponent,
} from "echarts/components";
import { CanvasRenderer } from "echarts/renderers";

echarts.use([
  BarChart,
  CustomChart,
  ScatterChart,
  LineChart,
  DataZoomInsideComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TooltipComponent,
  CanvasRenderer,
]);

export type Chart = echarts.ECharts;
export type Option = echarts.EChartsCoreOption;

const charts = new Map<HTMLElement, Chart>();

// Draws `option` into `host` (a div with role="img" and an aria-label), reusing its chart.
export function draw(host: HTMLElement, option: Option): Chart {
  let c = charts.get(host);
  if (!c || c.isDisposed()) {
    c = echarts.init(host, undefined, { renderer: "canvas" });
    charts.set(host, c);
  }
  c.setOption({ animation: false, ...option }, true);
  return c;
}

export function chartOf(host: HTMLElement): Chart | undefined {
  return charts.get(host);
}

window.addEventListener("resize", () => charts.forEach((c) => c.isDisposed() || c.resize()));

export const palette = [
  "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
];
