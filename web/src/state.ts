// The page's state lives in the URL's fragment (#view=simulate&model=...&tp=2), so a link
// reproduces the view: each screen reads its inputs from it and writes them back when run.

export type State = Record<string, string>;

export function readState(): State {
  const p = new URLSearchParams(location.hash.replace(/^#/, ""));
  const s: State = {};
  p.forEach((v, k) => (s[k] = v));
  return s;
}

// Replaces the fragment without adding a history entry per keystroke; `push` adds one.
export function writeState(s: State, push = false): void {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(s)) if (v !== "") p.set(k, v);
  const url = `${location.pathname}${location.search}#${p.toString()}`;
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
}
