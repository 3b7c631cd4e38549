#!/usr/bin/env python3
"""Lists C++ functions longer than a limit (default 60 lines) in glassllm/,
cli/ and bench/, longest first, so they can be split or given a comment that
says why they are long.

A function is a top-level brace block (namespaces excluded) whose opening
line looks like a definition; its length counts from its first line to its
closing brace. A function whose body (or the comment just above it) contains
"long-function:" followed by a reason is listed as justified, not as a
problem. Exits 1 when an unjustified one is found.

    python3 tools/long_functions.py [--limit 60] [paths...]
"""
import argparse
import pathlib
import re
import sys

DEFAULT_PATHS = ["glassllm", "cli", "bench"]


def strip(line):
    """The line without string/char literals and // comments."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def functions(path):
    lines = path.read_text().split("\n")
    depth = 0  # brace depth, not counting namespace braces
    start = None
    header = ""
    for i, raw in enumerate(lines):
        code = strip(raw)
        if depth == 0 and start is None:
            if code.strip():
                header = (header + " " + code.strip())[-400:]
            if "{" in code:
                if re.match(r"\s*namespace\b", code) or "namespace" in header.split("{")[0][-60:]:
                    header = ""
                    continue  # namespaces do not count as depth
                if re.search(r"\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->[^{]*)?(:[^{]*)?\{", header) and not re.search(r"\b(struct|class|enum|union)\b", header.split("(")[0]):
                    start = i
        for ch in code:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
        if depth < 0:
            depth = 0  # closing a namespace
        if depth == 0 and code.strip().endswith((";", "}")) and start is None:
            header = ""
        if start is not None and depth == 0:
            name = re.findall(r"([~\w:<>]+)\s*\(", header.split("{")[0])
            body = "\n".join(lines[max(0, start - 6):i + 1])
            yield (name[0] if name else "?"), start + 1, i - start + 1, "long-function:" in body
            start = None
            header = ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("paths", nargs="*", default=DEFAULT_PATHS)
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    found = []
    for p in args.paths:
        base = root / p
        files = [base] if base.is_file() else sorted(base.rglob("*.cpp")) + sorted(base.rglob("*.h"))
        for f in files:
            for name, line, length, justified in functions(f):
                if length > args.limit:
                    found.append((length, f"{f.relative_to(root)}:{line}", name, justified))
    bad = 0
    for length, where, name, justified in sorted(found, reverse=True):
        print(f"{length:4d}  {where:40s} {name}{'  (justified)' if justified else ''}")
        bad += not justified
    print(f"{len(found)} function(s) over {args.limit} lines, {bad} without a reason")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
