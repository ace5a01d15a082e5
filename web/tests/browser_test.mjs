// The web page in a real browser (ctest web_browser): starts `trainsim serve` on a free port,
// drives Debian's Chromium with playwright-core (no browser download), and checks that what the
// page shows equals what the CLI prints for the same input. Screenshots go to --out.
//
//   node web/tests/browser_test.mjs --trainsim build/trainsim --out build/web-test \
//        [--cases ../shared/validation/cases/public.jsonl] [--chromium /usr/bin/chromium]
//
// Fails loudly (exit 1) when Chromium, playwright-core or the built page is missing.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
const TRAINSIM = args.trainsim;
const OUT = args.out ?? "web-test";
const CHROMIUM = args.chromium ?? process.env.CHROMIUM ?? "/usr/bin/chromium";
let passed = 0;
let failed = 0;

function fatal(msg) {
  console.error(`web_browser: ${msg}`);
  console.log(`0 passed, 1 failed`);
  process.exit(1);
}
function check(name, cond, detail = "") {
  if (cond) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`FAIL - ${name}${detail ? `: ${detail}` : ""}`);
  }
}

if (!TRAINSIM || !existsSync(TRAINSIM)) fatal(`--trainsim ${TRAINSIM}: no such binary`);
if (!existsSync(CHROMIUM))
  fatal(`${CHROMIUM} not found: install Debian's chromium (make deps installs it)`);
let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch (e) {
  fatal(`playwright-core not installed (npm ci in web/, which the build runs): ${e.message}`);
}
mkdirSync(OUT, { recursive: true });

function cliJson(argv) {
  return JSON.parse(execFileSync(TRAINSIM, [...argv, "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
}
function cliText(argv) {
  return execFileSync(TRAINSIM, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
}

// Starts the server on a free port (--port 0) and reads the port from its first line.
function startServer() {
  const argv = ["serve", "--host", "127.0.0.1", "--port", "0"];
  if (args.cases && existsSync(args.cases)) argv.push("--cases", args.cases);
  const proc = spawn(TRAINSIM, argv, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no listening line after 20 s: ${out}`)), 20000);
    proc.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on http:\/\/([\d.]+):(\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, base: `http://${m[1]}:${m[2]}` });
      }
    });
    proc.on("exit", (code) => reject(new Error(`trainsim serve exited with ${code}: ${out}`)));
  });
}

const GIB = 1024 ** 3;
const shown = async (page, id) => ({
  text: (await page.locator(`#${id}`).textContent()).trim(),
  value: Number(await page.locator(`#${id}`).getAttribute("data-value")),
});

// The page's headline numbers equal the CLI's JSON (exactly) and read as its text report does.
async function checkNumbers(page, name, flags) {
  const j = cliJson(["simulate", ...flags]);
  const text = cliText(["simulate", ...flags]);
  const step = await shown(page, "m-step");
  const mfu = await shown(page, "m-mfu");
  const tfl = await shown(page, "m-tflops");
  const tok = await shown(page, "m-tokens");
  const peak = await shown(page, "m-peak");
  check(`${name}: step time equals simulate --json`, step.value === j.step_time_s, `${step.value} vs ${j.step_time_s}`);
  check(`${name}: MFU equals simulate --json`, mfu.value === j.mfu, `${mfu.value} vs ${j.mfu}`);
  check(`${name}: TFLOP/s equals simulate --json`, tfl.value === j.tflops_per_gpu);
  check(`${name}: tokens/s equals simulate --json`, tok.value === j.tokens_per_s_per_gpu);
  check(`${name}: peak memory equals simulate --json`, peak.value === j.peak_mem_bytes);
  const stepS = `${j.step_time_s.toFixed(4)} s`;
  check(`${name}: shown step time "${stepS}" as the text report prints it`,
    step.text.startsWith(stepS) && new RegExp(`step time +${stepS.replace(".", "\\.")}`).test(text), step.text);
  const band = step.text.slice(stepS.length);
  check(`${name}: shown band "${band.trim()}" as the text report`, band.includes("80 % band") && text.includes(band), band);
  const mfuS = `${(100 * j.mfu).toFixed(1)} %`;
  check(`${name}: shown MFU "${mfuS}" as the text report`, mfu.text === mfuS && text.includes(mfuS), mfu.text);
  const peakS = `${(j.peak_mem_bytes / GIB).toFixed(2)} GiB`;
  check(`${name}: shown peak memory "${peakS}" as the text report`, peak.text === peakS && text.includes(peakS), peak.text);
  check(`${name}: shown TFLOP/s with its unit`, tfl.text === `${j.tflops_per_gpu.toFixed(1)} TFLOP/s`, tfl.text);
  // The memory table's rows read as the text report's "memory per stage (GiB)" rows.
  for (let i = 0; i < j.stages.length; i++) {
    const cells = (await page.locator(`#table-memory tbody tr:nth-child(${i + 1}) td`).allTextContents()).join(" ");
    const row = text.split("\n").find((l) => new RegExp(`^ +stage ${i} +\\d`).test(l)) ?? "";
    const nums = (t) => (t.match(/\d+\.\d+|\d+/g) ?? []).join(" ");
    check(`${name}: memory table stage ${i} equals the text report's row`, nums(row) === `${i} ${nums(cells)}`,
      `${nums(cells)} vs ${nums(row)}`);
  }
  const stages = await page.locator("#chart-memory canvas").count();
  check(`${name}: memory chart drawn (${j.stages.length} stages)`, stages > 0);
  return j;
}

async function waitGantt(page, name) {
  await page.waitForFunction(() => !document.querySelector("#gantt-caption")?.textContent?.includes("loading"), null, { timeout: 20000 });
  const cap = await page.locator("#gantt-caption").textContent();
  check(`${name}: Gantt of the event-driven step drawn (${cap.trim()})`,
    cap.includes("micro-batches") && (await page.locator("#chart-gantt canvas").count()) > 0, cap);
}

async function testDefault(page, base) {
  const t0 = Date.now();
  await page.goto(`${base}/`);
  await page.locator("#m-step").waitFor({ timeout: 15000 });
  await page.locator("#chart-breakdown canvas").waitFor({ timeout: 15000 });
  const ms = Date.now() - t0;
  check(`"/" shows the default simulation's numbers and chart without a click (${ms} ms)`, ms < 20000);
  await checkNumbers(page, "default", ["--model", "llama3-8b", "--hardware", "h100_sxm_80gb", "--gpus", "8",
    "--tp", "1", "--pp", "2", "--mbs", "1", "--gbs", "32", "--seq", "4096"]);
  await waitGantt(page, "default");
  await page.screenshot({ path: join(OUT, "simulate-default.png"), fullPage: true });
}

async function testForm(page, base) {
  await page.getByLabel("Model", { exact: true }).selectOption("mixtral-8x7b");
  const set = { "f-gpus": "64", "f-tp": "2", "f-pp": "4", "f-ep": "8", "f-mbs": "1", "f-gbs": "256", "f-seq": "4096" };
  for (const [id, v] of Object.entries(set)) await page.locator(`#${id}`).fill(v);
  await page.getByRole("button", { name: "Simulate" }).click();
  await page.waitForFunction(() => document.querySelector("#report-title")?.textContent?.includes("mixtral-8x7b"), null, { timeout: 15000 });
  const flags = ["--model", "mixtral-8x7b", "--hardware", "h100_sxm_80gb", "--gpus", "64", "--tp", "2", "--pp", "4",
    "--ep", "8", "--mbs", "1", "--gbs", "256", "--seq", "4096"];
  await checkNumbers(page, "form (Mixtral-8x7B, 64 GPUs)", flags);
  await waitGantt(page, "form");
  await page.screenshot({ path: join(OUT, "simulate-form.png"), fullPage: true });
  // The URL holds the state: a fresh page at the same link shows the same numbers.
  const url = page.url();
  check("the URL carries the inputs", url.includes("model=mixtral-8x7b") && url.includes("ep=8"), url);
  const fresh = await page.context().newPage();
  await fresh.goto(url);
  await fresh.waitForFunction(() => document.querySelector("#report-title")?.textContent?.includes("mixtral-8x7b"), null, { timeout: 15000 });
  await checkNumbers(fresh, "reopened link", flags);
  await fresh.close();
  // A bad input names its field (the CLI's message), and the page keeps working.
  await page.locator("#f-tp").fill("3");
  await page.getByRole("button", { name: "Simulate" }).click();
  const alert = page.getByRole("alert");
  await alert.waitFor({ timeout: 10000 });
  const msg = await alert.textContent();
  check(`an invalid strategy shows the field and rule (${msg.trim()})`, /tp/.test(msg), msg);
  void base;
}

async function testSearch(page, base) {
  await page.goto(`${base}/#view=search`);
  await page.locator("#s-gpus").fill("8");
  await page.locator("#s-gbs").fill("32");
  await page.locator("#s-seq").fill("4096");
  await page.locator("#s-top").fill("5");
  await page.getByRole("button", { name: "Search" }).click();
  await page.locator("#search-progress").waitFor({ timeout: 10000 });
  check("search shows a progress bar", true);
  await page.locator("#search-summary").waitFor({ timeout: 60000 });
  const j = cliJson(["search", "--model", "llama3-8b", "--hardware", "h100_sxm_80gb", "--gpus", "8", "--gbs", "32",
    "--seq", "4096", "--top", "5", "--no-progress"]);
  const summary = await page.locator("#search-summary").textContent();
  check(`search summary counts equal the CLI's (${j.evaluated} evaluated, ${j.feasible} feasible)`,
    summary.includes(`evaluated ${j.evaluated} strategies (${j.feasible} feasible)`), summary);
  const rows = page.locator("#table-top tbody tr");
  check("top-K table has 5 rows", (await rows.count()) === 5);
  const best = Number(await rows.nth(0).locator("td[data-value]").getAttribute("data-value"));
  check("best step time equals search --json", best === j.top[0].step_time_s, `${best} vs ${j.top[0].step_time_s}`);
  await page.locator("#chart-pareto canvas").waitFor();
  await page.screenshot({ path: join(OUT, "search.png"), fullPage: true });
  // Click the first Pareto point where the chart draws it: the page turns to simulate it.
  const px = await page.evaluate(() => window.trainsim.paretoPixel(0));
  const box = await page.locator("#chart-pareto").boundingBox();
  check("the Pareto front is drawn", px !== null && box !== null);
  await page.mouse.click(box.x + px[0], box.y + px[1]);
  await page.waitForFunction(() => location.hash.includes("view=simulate"), null, { timeout: 10000 });
  await page.locator("#m-step").waitFor({ timeout: 15000 });
  const step = Number(await page.locator("#m-step").getAttribute("data-value"));
  const want = j.pareto[0].step_time_s;
  check(`clicking a Pareto point simulates it (${step} s, the search said ${want} s)`,
    Math.abs(step - want) <= 1e-12 * want, `${step} vs ${want}`);
  await waitGantt(page, "Pareto point");
  await page.screenshot({ path: join(OUT, "simulate-pareto-point.png"), fullPage: true });
}

async function testValidate(page, base) {
  if (!args.cases || !existsSync(args.cases)) {
    console.log(`note: validate screen not checked (no --cases file: ${args.cases})`);
    return;
  }
  await page.goto(`${base}/#view=validate`);
  await page.locator("#v-time-mape").waitFor({ timeout: 60000 });
  await page.locator("#chart-validate canvas").waitFor();
  const j = cliJson(["validate", args.cases]);
  const mape = Number(await page.locator("#v-time-mape").getAttribute("data-value"));
  check(`validate: time MAPE equals validate --json (${(100 * j.time_mape).toFixed(1)} %)`, mape === j.time_mape, `${mape} vs ${j.time_mape}`);
  await page.screenshot({ path: join(OUT, "validate.png"), fullPage: true });
}

// The plan screen: its numbers equal `plan --json` for the same input; the link reproduces it;
// the recommend table lists the clusters `recommend --json` ranks.
async function testPlan(page, base) {
  const link = `${base}/#view=plan&model=llama3-8b&hardware=h100_sxm_80gb&gpus=8&tp=2&pp=2&gbs=32` +
    `&tokens=2e11&price=2.5&deadline=30&rec=1&recgpus=8,16`;
  await page.goto(link);
  await page.locator("#p-wall").waitFor({ timeout: 20000 });
  const j = cliJson(["plan", "--model", "llama3-8b", "--hardware", "h100_sxm_80gb", "--gpus", "8", "--tp", "2",
    "--pp", "2", "--gbs", "32", "--tokens", "2e11", "--price-per-gpu-hour", "2.5"]);
  for (const [id, key] of [["p-wall", "wall_time_s"], ["p-cost", "cost_usd"], ["p-energy", "energy_kwh"],
    ["p-goodput", "goodput"], ["p-gpuh", "gpu_hours"], ["p-step", "step_time_s"]]) {
    const v = await shown(page, id);
    check(`plan: ${key} equals plan --json (${v.text})`, v.value === j[key], `${v.value} vs ${j[key]}`);
  }
  const wall = await shown(page, "p-wall");
  check("plan: wall time shown in days", wall.text === `${(j.wall_time_s / 86400).toFixed(2)} days`, wall.text);
  const meets = await page.locator("#p-deadline").getAttribute("data-value");
  check("plan: the deadline verdict follows the wall time", meets === String(j.wall_time_s <= 30 * 86400), meets);
  await page.locator("#table-recommend").waitFor({ timeout: 120000 });
  const rec = cliJson(["recommend", "--model", "llama3-8b", "--tokens", "2e11", "--gbs", "32", "--gpus", "8,16",
    "--deadline-days", "30", "--price-per-gpu-hour", "2.5", "--top", "10"]);
  const rows = page.locator("#table-recommend tbody tr");
  check(`plan: recommend table has the CLI's ${rec.plans.length} rows`, (await rows.count()) === rec.plans.length);
  if (rec.plans.length) {
    const first = await rows.nth(0).locator("td").allTextContents();
    check("plan: recommend's first row equals recommend --json",
      first[0] === rec.plans[0].hardware && first[1] === String(rec.plans[0].gpus), first.join(" | "));
  }
  await page.screenshot({ path: join(OUT, "plan.png"), fullPage: true });
  check("plan: the URL carries the inputs", page.url().includes("tokens=2e11") && page.url().includes("rec=1"), page.url());
}

// The serve screen: its numbers equal `infer --json` for the same input; a disaggregated layout
// reaches the request; the link reproduces it.
async function testInfer(page, base) {
  await page.goto(`${base}/#view=infer&model=llama3-8b&hardware=h100_sxm_80gb&prompt=1024&output=256&batch=32`);
  await page.locator("#i-ttft").waitFor({ timeout: 20000 });
  await page.locator("#chart-infer canvas").waitFor();
  const j = cliJson(["infer", "--model", "llama3-8b", "--hardware", "h100_sxm_80gb", "--prompt-len", "1024",
    "--output-len", "256", "--batch", "32"]);
  for (const [id, key] of [["i-ttft", "ttft_s"], ["i-tpot", "tpot_s"], ["i-tps", "output_tokens_per_s"],
    ["i-batch", "batch"]]) {
    const v = await shown(page, id);
    check(`infer: ${key} equals infer --json (${v.text})`, v.value === j[key], `${v.value} vs ${j[key]}`);
  }
  check("infer: TTFT shown in ms", (await shown(page, "i-ttft")).text === `${(1000 * j.ttft_s).toFixed(2)} ms`);
  await page.screenshot({ path: join(OUT, "infer.png"), fullPage: true });
  await page.fill("#f-igpus", "16");
  await page.fill("#f-disagg", "8:8");
  await page.click("#run-infer");
  await page.waitForFunction(() => location.hash.includes("disagg=8%3A8"), null, { timeout: 10000 });
  await page.locator("#i-tps").waitFor({ timeout: 20000 });
  const d = cliJson(["infer", "--model", "llama3-8b", "--hardware", "h100_sxm_80gb", "--prompt-len", "1024",
    "--output-len", "256", "--batch", "32", "--gpus", "16", "--disaggregate", "8:8"]);
  await page.waitForFunction((want) => document.querySelector("#i-tps")?.getAttribute("data-value") === want,
    String(d.output_tokens_per_s), { timeout: 20000 });
  check("infer: the disaggregated layout equals infer --disaggregate 8:8", true);
}

const { proc, base } = await startServer().catch((e) => fatal(e.message));
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const root = await (await fetch(`${base}/`)).text();
  if (!root.includes("<script")) fatal(`"/" is not the built page (was web/ built? npm present?): ${root.slice(0, 200)}`);
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  for (const t of [testDefault, testForm, testSearch, testValidate, testPlan, testInfer]) {
    try {
      await t(page, base);
    } catch (e) {
      check(`${t.name} ran to the end`, false, e.message.split("\n")[0]);
      await page.screenshot({ path: join(OUT, `${t.name}-failure.png`), fullPage: true }).catch(() => {});
    }
  }
  check("no script errors on the page", errors.length === 0, errors.join("; "));
} finally {
  await browser.close();
  proc.kill("SIGTERM");
}
console.log(`screenshots: ${OUT}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
