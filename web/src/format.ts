// Numbers with their units, rounded as the CLI's text report rounds them
// (src/report/report_text.cc): seconds to 4 decimals, percentages to 1, GiB to 2.

const GIB = 1024 ** 3;

export function seconds(s: number): string {
  return `${s.toFixed(4)} s`;
}
export function percent(fraction: number): string {
  return `${(100 * fraction).toFixed(1)} %`;
}
export function gib(bytes: number): string {
  return `${(bytes / GIB).toFixed(2)} GiB`;
}
export function toGib(bytes: number): number {
  return bytes / GIB;
}
export function tflops(t: number): string {
  return `${t.toFixed(1)} TFLOP/s`;
}
export function tokensPerS(t: number): string {
  return `${Math.round(t).toLocaleString("en-US")} tokens/s`;
}
export function billions(n: number): string {
  return `${(n / 1e9).toFixed(2)} B`;
}
export function usd(x: number): string {
  return `$${x.toFixed(4)}`;
}
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

// Element helper: el("div", {class: "x"}, child, "text").
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}
