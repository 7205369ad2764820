#!/usr/bin/env python3
"""Writes src/report_page.h from src/report_page.html: the page before and
after its <!--DATA--> line as two C string literals (rsc_report_html puts
the report's JSON between them). Run after editing the page:
    python3 scripts/gen-report-page.py
tests/test_report.c checks that the header matches the page."""
import os
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
page = open(os.path.join(root, "src/report_page.html"), encoding="utf-8").read()
marker = "<!--DATA-->\n"
if page.count(marker) != 1:
    sys.exit("src/report_page.html: wants exactly one <!--DATA--> line")
head, tail = page.split(marker)


def literal(text):
    out = []
    for line in text.splitlines(keepends=True):
        s = "".join(
            "\\\\" if c == "\\" else '\\"' if c == '"' else "\\n" if c == "\n" else "\\t" if c == "\t" else c
            for c in line
        )
        # "??" would start a trigraph in some compilers' modes
        s = s.replace("??", '?""?')
        out.append('    "' + s + '"')
    return "\n".join(out) if out else '    ""'


with open(os.path.join(root, "src/report_page.h"), "w", encoding="utf-8") as f:
    f.write(
        "/* report_page.h - generated from src/report_page.html by\n"
        " * scripts/gen-report-page.py; edit the page, then run the script. The page\n"
        " * before and after its data (rsc_report_html writes the JSON between). */\n"
        "#ifndef RSC_REPORT_PAGE_H\n#define RSC_REPORT_PAGE_H\n\n"
        "// clang-format off\n"
        "static const char rsc__report_page_head[] =\n" + literal(head) + ";\n\n"
        "static const char rsc__report_page_tail[] =\n" + literal(tail) + ";\n// clang-format on\n\n#endif\n"
    )
