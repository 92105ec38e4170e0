#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/lint-bats.py FILE... - find the checks in bats files that can never
# fail a test. Bats runs a test with `set -e`, and bash does not exit
#   - on a command negated with `!` (`! grep -q x file`), unless it is the
#     last command of the test or function: it sets the status and goes on;
#   - on a failure of any command of an `a && b` list but the last: when
#     `a` fails, `b` is not run and the list is not an error either.
# Reported, one line each as FILE:LINE: WHAT,
#   - a statement that starts with `!`, has no `||`, and is not the last
#     statement of a @test or function body;
#   - in a @test body, a statement with a top-level `&&` list whose last
#     operator is `&&` (no `|| false` after it), whose right side is a
#     check ([, [[, test, !, grep, cmp, diff, mountpoint, assert_*,
#     refute_*), and which is not the last statement of the body. A guard
#     before an action (`[ -e x ] && mv x y`) is left alone, and so are
#     keyword statements (if, while, until, for, case): conditions.
# Quoted text, $(...), (...), [[...]] and here-documents are not looked
# into. The exit status is 1 when something was found.
import re
import sys

KEYWORDS = ("if", "elif", "while", "until", "for", "case", "select")
CHECKS = ("[", "[[", "test", "!", "grep", "cmp", "diff", "mountpoint")
LEAD = re.compile(r"^(?:(?:then|else|do|\{)\s+)+")


def scan(text, state):
    """Blank out quoted text and nested groups of one physical line.

    state: [quote, depth, heredoc terminators pending]; returns the
    top-level text (the rest replaced by spaces)."""
    out = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        q = state[0]
        if q == "'":
            if c == "'":
                state[0] = None
            out.append(" ")
            i += 1
            continue
        if q == '"':
            if c == "\\" and i + 1 < n:
                out.append("  ")
                i += 2
                continue
            if c == '"':
                state[0] = None
            out.append(" ")
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            out.append("  ")
            i += 2
            continue
        if c in "'\"":
            state[0] = c
            out.append(" ")
            i += 1
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t;") and state[1] == 0:
            break
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            m = re.match(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1", text[i:])
            if m:
                state[2].append(m.group(2))
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
                continue
        if text.startswith("[[", i) or c == "(":
            w = "[[" if c == "[" else "("
            out.append(w if state[1] == 0 else " " * len(w))
            state[1] += 1
            i += len(w)
            continue
        if state[1] > 0 and (text.startswith("]]", i) or c == ")"):
            w = "]]" if c == "]" else ")"
            state[1] -= 1
            out.append(w if state[1] == 0 else " " * len(w))
            i += len(w)
            continue
        out.append(c if state[1] == 0 else " ")
        i += 1
    return "".join(out)


def statements(lines):
    """(first line number, top-level text) of each logical line of a body."""
    state = [None, 0, []]
    heredoc = []
    cur = None
    start = 0
    for no, line in lines:
        if heredoc:
            if line.strip() == heredoc[0]:
                heredoc.pop(0)
            continue
        top = scan(line, state)
        if state[2]:
            heredoc.extend(state[2])
            state[2] = []
        if cur is None:
            cur, start = top, no
        else:
            cur += " " + top
        s = cur.rstrip()
        if state[0] or state[1] > 0 or s.endswith(("\\", "&&", "||", "|")):
            if s.endswith("\\"):
                cur = s[:-1]
            continue
        if s.strip():
            yield start, s
        cur = None


def bodies(path):
    """(kind, [(line number, text)]) of each @test and function body."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    kind, body = None, []
    for no, line in enumerate(lines, 1):
        if kind is None:
            if re.match(r"^@test\s.*\{\s*$", line):
                kind, body = "test", []
            elif re.match(r"^(function\s+)?[A-Za-z_][A-Za-z0-9_-]*\s*\(\)\s*\{\s*$", line):
                kind, body = "function", []
            continue
        if re.match(r"^\}\s*$", line):
            yield kind, body
            kind = None
            continue
        body.append((no, line))


def check(path):
    found = []
    for kind, body in bodies(path):
        stmts = list(statements(body))
        for k, (no, s) in enumerate(stmts):
            last = k == len(stmts) - 1
            for seg in s.split(";"):
                seg = LEAD.sub("", seg.strip())
                if not seg:
                    continue
                words = seg.split()
                if words[0] in KEYWORDS or last:
                    continue
                if words[0] == "!" and "||" not in seg:
                    found.append((no, f"a bare ! in a {kind} never fails it: "
                                  "use run !, or if ...; then false; fi"))
                    continue
                if kind != "test" or "&&" not in seg:
                    continue
                ops = re.findall(r"&&|\|\|", seg)
                if ops[-1] != "&&":
                    continue
                right = seg.rsplit("&&", 1)[1].split()
                if not right or not (right[0] in CHECKS or
                                     right[0].startswith(("assert_", "refute_"))):
                    continue
                found.append((no, "the left of && never fails the test: "
                              "add || false, or one check a line"))
    for no, what in found:
        print(f"{path}:{no}: {what}")
    return not found


def main(argv):
    ok = True
    for path in argv[1:]:
        ok = check(path) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
