"""The HTML page of ``psro report``: the report's Markdown rendered as one self-contained file
(figures embedded as base64 PNG)."""

from __future__ import annotations

import base64
import html
from pathlib import Path


def markdown_to_html(lines: list[str], folder: Path) -> str:
    """A small renderer for the Markdown this module writes: headings, tables, lists, images
    (embedded as base64 so the HTML file stands alone) and paragraphs."""
    body = []
    table: list[list[str]] = []

    def flush_table():
        if not table:
            return
        rows = [r for r in table if not all(set(c.strip()) <= {"-"} for c in r)]
        head, *rest = rows
        body.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>" +
                    "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>"
                            for r in rest) + "</table>")
        table.clear()

    for line in lines:
        if line.startswith("|"):
            table.append([html.escape(c.strip()).replace("`", "")
                          for c in line.strip("|").split("|")])
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("!["):
            alt, file = line[2:].split("](")
            data = base64.b64encode((folder / file.rstrip(")")).read_bytes()).decode()
            body.append(f'<p><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"'
                        f' style="max-width:100%"></p>')
        elif line.startswith("- "):
            body.append(f"<ul><li>{html.escape(line[2:])}</li></ul>")
        elif line.strip():
            body.append(f"<p>{html.escape(line).replace('`', '')}</p>")
    flush_table()
    style = ("body{font-family:sans-serif;max-width:1000px;margin:2em auto;}"
             "table{border-collapse:collapse;margin:1em 0;font-size:0.85em}"
             "td,th{border:1px solid #ccc;padding:2px 6px}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>PSRO report</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>")
