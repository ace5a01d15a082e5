// The page `trainsim serve` serves at "/": five screens chosen by the URL fragment
// (#view=simulate|search|validate|plan|infer&...), so a link reproduces what it shows. Opening "/" runs the
// default simulation at once.
import { getJson, type HardwareEntry, type ModelEntry } from "./api";
import { el } from "./format";
import { renderInfer } from "./infer";
import { renderPlan } from "./plan";
import { paretoPixel, renderSearch } from "./search";
import { errorBox, renderSimulate, type Catalogue } from "./simulate";
import { readState } from "./state";
import { renderValidate } from "./validate";

let catalogue: Catalogue | null = null;

async function loadCatalogue(): Promise<Catalogue> {
  if (catalogue) return catalogue;
  const boot = (window as unknown as { trainsimBoot?: Record<string, Promise<Response>> }).trainsimBoot;
  const [m, h] = await Promise.all([
    getJson<{ models: ModelEntry[] }>("/v1/models", boot?.models),
    getJson<{ hardware: HardwareEntry[] }>("/v1/hardware", boot?.hardware),
  ]);
  catalogue = { models: m.models, hardware: h.hardware };
  return catalogue;
}

async function route(): Promise<void> {
  const root = document.getElementById("app") as HTMLElement;
  const state = readState();
  const view = state.view ?? "simulate";
  document.querySelectorAll<HTMLAnchorElement>("nav a").forEach((a) => {
    if (a.dataset.view === view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  });
  document.title = `trainsim · ${view}`;
  try {
    if (view === "validate") return await renderValidate(root);
    const cat = await loadCatalogue();
    if (view === "search") renderSearch(root, state, cat);
    else if (view === "plan") renderPlan(root, state, cat);
    else if (view === "infer") renderInfer(root, state, cat);
    else renderSimulate(root, state, cat);
  } catch (e) {
    root.replaceChildren(el("section", { class: "results full" }, errorBox(e)));
  }
}

window.addEventListener("hashchange", () => void route());
(window as unknown as { trainsim: unknown }).trainsim = { paretoPixel };
void route();
