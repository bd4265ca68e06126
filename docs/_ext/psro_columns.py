"""A Sphinx directive that writes the columns of the toolkit's tabular files from the code that
declares them, so that the guide cannot drift from the files:

    ```{psro-columns} metrics
    ```

``metrics``: the metrics rows (``metrics.csv``, ``metrics.jsonl``), each column with the runs
that write it (:func:`psro.column_catalogue.column_writers`) and its meaning
(:data:`psro.metrics_row.MEANINGS`); ``report-table``, ``report-curves``, ``suite-results``:
the columns of ``psro report``'s ``table.csv`` and ``curves_<axis>.csv`` and of a suite's
``results.csv``.
"""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import Directive


def _metrics_rows() -> list[tuple[str, str, str]]:
    from psro.column_catalogue import column_writers
    from psro.metrics_row import MEANINGS

    return [(f"`{column}`", ", ".join(writers), MEANINGS[column])
            for column, writers in column_writers().items()]


def _names(columns) -> list[tuple[str]]:
    return [(f"`{c}`",) for c in columns]


def _rows(kind: str) -> tuple[list[str], list[tuple]]:
    if kind == "metrics":
        return ["column", "written by", "what it holds"], _metrics_rows()
    if kind == "report-table":
        from psro.reports.tables import TABLE_COLUMNS

        return ["column"], _names(TABLE_COLUMNS)
    if kind == "report-curves":
        from psro.reports.tables import curve_columns

        return ["column"], _names(curve_columns("<axis>"))
    if kind == "suite-results":
        from psro.bench.results_table import COLUMNS

        return ["column"], _names(COLUMNS)
    raise ValueError(f"psro-columns: unknown table {kind!r}")


def _cell(text: str) -> nodes.entry:
    """A table cell; text between backquotes is set as code."""
    paragraph = nodes.paragraph()
    for k, part in enumerate(text.split("`")):
        if part:
            paragraph += nodes.literal(part, part) if k % 2 else nodes.Text(part)
    return nodes.entry("", paragraph)


class ColumnsDirective(Directive):
    """``psro-columns KIND``: a table of the columns of one kind of file."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        """The table, built as docutils nodes (the page may be Markdown or reStructuredText)."""
        header, rows = _rows(self.arguments[0])
        group = nodes.tgroup(cols=len(header))
        group += [nodes.colspec(colwidth=1) for _ in header]
        head = nodes.thead()
        head += nodes.row("", *(_cell(text) for text in header))
        body = nodes.tbody()
        for row in rows:
            body += nodes.row("", *(_cell(text) for text in row))
        group += [head, body]
        table = nodes.table()
        table += group
        return [table]


def setup(app):
    """Register the directive with Sphinx."""
    app.add_directive("psro-columns", ColumnsDirective)
    return {"parallel_read_safe": True}
