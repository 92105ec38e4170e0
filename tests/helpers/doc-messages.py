#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""doc-messages.py SRCDIR DOC... - the messages the documents quote
against the code's format strings.

A quoted message is a code span or a line of a code block that reads
"ramboot: COMMAND: ...". Its text after the tag (error: or warning:, or
none) must be one the code can print: a line with no tag is a report
line (rb_info), so it must match an rb_info() format; a tagged one must
match a format of any message (rb_err(), rb_warn(), the error buffers
they print) that holds at least 8 characters of its own, so that "%s:
%s" does not stand for every text. Quotes with placeholders ("...",
"<what>") are left out. Prints one line per quote that matches nothing;
exit 1 if there is any.
"""
import glob
import os
import re
import sys

LIT = r'"(?:[^"\\]|\\.)*"'
# string literals joined as C joins them, PRI* macros between them
JOINED = re.compile(r'(%s(?:\s*(?:PRI[a-zA-Z0-9]+\s*)?%s)*)' % (LIT, LIT))
CONV = re.compile(r'%%|%[-+ #0]*(?:\*|[0-9]+)?(?:\.(?:\*|[0-9]+))?(?:hh|h|ll|l|z|j|t|L)?[diouxXfFeEgGcsp]')


def unquote(joined):
    parts = re.findall(r'(%s)|(PRI[a-zA-Z0-9]+)' % LIT, joined)
    out = ''
    for lit, pri in parts:
        if pri:
            out += 'llu'
        else:
            out += re.sub(r'\\(.)', lambda e: {'n': '\n', 't': '\t'}.get(e.group(1), e.group(1)),
                          lit[1:-1])
    return out


def fmt_regex(fmt):
    rx, pos, own = '', 0, 0
    for m in CONV.finditer(fmt):
        lit = fmt[pos:m.start()]
        own += len(lit)
        rx += re.escape(lit)
        c = m.group(0)
        if c == '%%':
            rx += '%'
            own += 1
        elif c[-1] in 'sp':
            rx += '.*'
        elif c[-1] == 'c':
            rx += '.'
        else:
            rx += r'[-+]?[0-9.]+(?:e[-+]?[0-9]+)?'
        pos = m.end()
    lit = fmt[pos:]
    own += len(lit)
    rx += re.escape(lit)
    return re.compile(rx + r'\Z', re.S), own


def formats(srcdir):
    info, every = [], []
    for path in sorted(glob.glob(os.path.join(srcdir, '**', '*.c'), recursive=True)):
        text = open(path, encoding='utf-8').read()
        for m in JOINED.finditer(text):
            fmt = unquote(m.group(1))
            rx, own = fmt_regex(fmt)
            if own >= 8:
                every.append(rx)
            before = text[max(0, m.start() - 20):m.start()]
            if re.search(r'\brb_(?:info|note)\(\s*$', before):
                info.append(rx)
    return info, every


def quotes(path):
    text = open(path, encoding='utf-8').read()
    found = []
    fence = False
    for line in text.split('\n'):
        if line.startswith('```'):
            fence = not fence
            continue
        if fence or line.startswith('    '):
            s = line.strip()
            if re.match(r'ramboot: [a-z]+: ', s):
                found.append(s)
    body = re.sub(r'```.*?```', '', text, flags=re.S)
    for m in re.finditer(r'`([^`]+)`', body):
        s = re.sub(r'\s*\n\s*', ' ', m.group(1)).strip()
        if re.match(r'ramboot: [a-z]+: ', s):
            found.append(s)
    return found


def main():
    info, every = formats(sys.argv[1])
    bad = 0
    for doc in sys.argv[2:]:
        for q in quotes(doc):
            if '...' in q or '<' in q:
                continue
            rest = re.sub(r'^ramboot: [a-z]+: ', '', q)
            if rest.startswith(('error: ', 'warning: ')):
                pool, rest = every, rest.split(': ', 1)[1]
            else:
                pool = info
            if not any(rx.match(rest) for rx in pool):
                print('%s: %s' % (os.path.basename(doc), q))
                bad += 1
    return 1 if bad else 0


sys.exit(main())
