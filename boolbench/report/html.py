"""The one table renderer: Markdown tables, and small self-contained HTML pages (tables,
examples, config) that the Snakemake report embeds.

No scripts and no external resources: a page renders the same offline, inside the report's
iframe or opened on its own. Metric tables add LaTeX
(boolbench.retrieval.evaluation.write_table_files)."""

from __future__ import annotations

import os
from html import escape

from boolbench.io import write_text_atomic

STYLE = """
body { font-family: system-ui, sans-serif; font-size: 14px; margin: 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f0f0f0; }
th[scope="row"] { text-align: left; white-space: nowrap; background: #fafafa; }
td.text, th.text { text-align: left; }
caption { caption-side: top; text-align: left; font-weight: bold; padding-bottom: 4px; }
p.note { color: #555; margin: 0.2em 0; }
pre { background: #f7f7f7; padding: 0.8em; border: 1px solid #ddd; overflow-x: auto; }
.passage { color: #444; }
.rejected { color: #a33; }
.kept { color: #262; }
.pooled { font-style: italic; }
"""


def table(
    headers: list[str],
    rows: list[list[str]],
    caption: str = "",
    text_columns=(),
    row_headers: bool = False,
) -> str:
    """An HTML table; `rows` hold cell HTML (escape text with `escape`), headers plain text.

    Columns whose index is in `text_columns` are left-aligned (numbers align right); with
    `row_headers`, each row's first cell is its label (a model name: never wrapped)."""

    def cell(tag: str, index: int, content: str) -> str:
        if row_headers and index == 0 and tag == "td":
            return f'<th scope="row">{content}</th>'
        align = ' class="text"' if index in text_columns else ""
        return f"<{tag}{align}>{content}</{tag}>"

    head = "".join(cell("th", i, escape(h)) for i, h in enumerate(headers))
    body = "\n".join(
        "<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    title = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{title}\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table>"


def markdown_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table; cells are Markdown text ("|" in them is escaped)."""

    def line(cells) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(headers), "|" + "|".join("---" for _ in headers) + "|", *map(line, rows)]


def notes(lines: list[str]) -> str:
    return "\n".join(f'<p class="note">{escape(line)}</p>' for line in lines)


def page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>\n<h3>{escape(title)}</h3>\n{body}\n</body></html>\n"
    )


def write_page(path: str | os.PathLike, title: str, body: str) -> None:
    write_text_atomic(path, page(title, body))
