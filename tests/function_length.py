#!/usr/bin/env python3
"""No function in src/, apps/ or python/ is longer than 120 lines.

A small brace-matching scanner over the .cc files (tests, *_test.cc, are exempt): comments,
string and character literals (raw strings included) and preprocessor lines are blanked out,
then every top-level-in-its-scope `{` whose header looks like a function signature
(`name(...)` optionally followed by const/noexcept/override/-> type/initializer list) opens a
function body; its length is the number of lines from the signature's first line to the
closing `}`. Lambdas and local classes count as part of the function that contains them.
Bodies of namespaces, classes, structs, enums and initializer braces are scanned through.
Known blind spots (they can only hide a function, never invent one): constructors whose
initializer list uses braces (`: a_{x} {`) and `operator()` definitions are not measured.

Usage: function_length.py [--max N] [--allow FILE] [--root DIR] [--list]
Exit 1 when a function not on the allow-list is longer than N lines (default 120), or when an
allow-list entry is stale (that function is now short enough or gone: shrink the list).
Allow-list lines: `path/to/file.cc FunctionName` (qualified names as printed; # comments).
"""

import argparse
import os
import re
import sys

KEYWORDS_NOT_FUNCTIONS = {
    "if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype",
    "static_assert", "defined", "noexcept", "requires", "co_return",
}


def is_ident_char(text, i):
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


def strip_code(text):
    """Blank comments, string/char literals and preprocessor lines; keep newlines."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":  # preprocessor directive (with continuations)
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        at_line_start = False
        if c == "\n":
            out.append(c)
            at_line_start = True
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i) and not is_ident_char(text, i - 1):
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c in "\"'":
            if c == "'" and text[i - 1 : i].isalnum() and text[i + 1 : i + 2].isalnum():
                i += 1  # digit separator 1'000'000
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


SIG_TAIL = re.compile(
    r"\)\s*(?:const\s*)?(?:volatile\s*)?(?:&&?\s*)?(?:noexcept(?:\s*\([^()]*\))?\s*)?"
    r"(?:override\s*|final\s*)*(?:->\s*[\w:<>,\s*&]+)?\s*$")


# A possibly qualified name (ns::Class<T>::Name, ~Name, operator==) at the end of a string.
NAME_AT_END = re.compile(
    r"((?:[A-Za-z_]\w*\s*(?:<[^<>;{}()]*>)?\s*::\s*)*~?[A-Za-z_]\w*|operator\s*[^\s(]+)\s*$")


def function_name(header):
    """The name of the function whose body starts after `header`, or None."""
    h = header.rstrip()
    # Constructor initializer list: `Foo(...) : a_(x), b_{y}` -> cut at the ':' that follows ')'.
    m = re.search(r"\)\s*(?:noexcept\s*)?:\s*[\w:]+\s*[({]", h)
    if m:
        h = h[: m.start() + 1]
    if not SIG_TAIL.search(h):
        return None
    # Find the '(' matching the last ')' of the signature.
    close = h.rfind(")")
    depth = 0
    for k in range(close, -1, -1):
        if h[k] == ")":
            depth += 1
        elif h[k] == "(":
            depth -= 1
            if depth == 0:
                break
    else:
        return None
    before = h[:k].rstrip()
    m = NAME_AT_END.search(before)
    if not m:
        return None
    name = re.sub(r"\s+", "", m.group(1))
    last = name.split("::")[-1]
    if last in KEYWORDS_NOT_FUNCTIONS:
        return None
    # `= [&](...)`, `return x(...)`: an expression, not a definition.
    prefix = before[: m.start()].rstrip()
    if prefix.endswith(("=", "return", ",", "(", "[", "&&", "||", "?", "<<", "+")):
        return None
    if prefix.endswith("]"):  # lambda with a capture list: part of the enclosing function
        return None
    return name


def scan_functions(code):
    """Yields (name, first_line, last_line) for every function body in `code` (stripped)."""
    line_of = []
    ln = 1
    for ch in code:
        line_of.append(ln)
        if ch == "\n":
            ln += 1
    stack = []  # per '{': None (scope) or (name, start_line) for a function body
    header_start = 0  # start of the text since the last ';', '{' or '}' at this level
    inside_function = 0
    for i, ch in enumerate(code):
        if ch == "{":
            header = code[header_start:i]
            name = None if inside_function else function_name(header)
            if name:
                first = header_start + len(header) - len(header.lstrip())
                stack.append((name, line_of[first] if first < len(line_of) else line_of[i]))
                inside_function += 1
            else:
                stack.append(None)
            header_start = i + 1
        elif ch == "}":
            top = stack.pop() if stack else None
            if top is not None:
                inside_function -= 1
                yield top[0], top[1], line_of[i]
            header_start = i + 1
        elif ch == ";":
            header_start = i + 1


SELF_TEST = r"""
namespace a {
// a comment with { braces } and Foo(int) {
int Foo(int x) {
  const char* s = "}{";  // }
  auto f = [&](int y) {
    return y + '}';
  };
  return f(x);
}
struct S {
  S(int v) : v_(v) {}
  int Get() const { return v_; }
  int v_;
};
}  // namespace a
std::string Raw() {
  return R"j({"a": {"b": 1}})j";
}
template <typename T>
std::optional<T> Parse(std::string_view s) noexcept {
  if (s.empty()) {
    return std::nullopt;
  }
  return T{};
}
int a::S::Other(int x) const
    override {
  /* } */
  return x;
}
"""


def self_test():
    """The scanner on a sample with the awkward cases; returns an error text or None."""
    got = [(n, b - a + 1) for n, a, b in scan_functions(strip_code(SELF_TEST))]
    want = [("Foo", 7), ("S", 1), ("Get", 1), ("Raw", 3), ("Parse", 7), ("a::S::Other", 5)]
    return None if got == want else f"scanner self-test: got {got}, want {want}"


def read_allow(path):
    allow = set()
    if not path or not os.path.exists(path):
        return allow
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if line:
                parts = line.split()
                allow.add((parts[0], parts[1] if len(parts) > 1 else ""))
    return allow


def source_files(root):
    for top in ("src", "apps", "python"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(".cc") and not f.endswith("_test.cc"):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=120)
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--allow", default=os.path.join(here, "function_length_allow.txt"))
    ap.add_argument("--list", action="store_true", help="print every function's length")
    args = ap.parse_args()

    err = self_test()
    if err:
        print(err)
        return 2
    allow = read_allow(args.allow)
    long_ones, seen = [], set()
    for rel in sorted(source_files(args.root)):
        with open(os.path.join(args.root, rel), encoding="utf-8") as f:
            code = strip_code(f.read())
        for name, first, last in scan_functions(code):
            length = last - first + 1
            if args.list:
                print(f"{rel}:{first}: {name} {length}")
            if length > args.max:
                long_ones.append((rel, first, name, length))

    failed = False
    for rel, first, name, length in long_ones:
        seen.add((rel, name))
        status = "allowed" if (rel, name) in allow else "TOO LONG"
        failed |= status == "TOO LONG"
        print(f"{rel}:{first}: {name} is {length} lines (max {args.max}) [{status}]")
    for rel, name in sorted(allow - seen):
        failed = True
        print(f"{args.allow}: '{rel} {name}' is no longer over {args.max} lines: remove it")
    if failed:
        print("function_length: FAIL (split the function, or shrink the allow-list)")
        return 1
    print(f"function_length: ok ({len(long_ones)} allowed offenders)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
