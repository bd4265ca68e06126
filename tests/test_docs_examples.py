"""The documentation's Python examples run as written (the README's quick start, the guide's
exploitability of any policy, every example of extending the toolkit, the tabular
solvers' and the self-rewarding judge's), and the README stays
a short guide beside the docs site."""

import re

from conftest import ROOT

SECTIONS = [("README.md", "## Quick start"),
            ("docs/guide/python-api.md", "## Exploitability of any policy"),
            ("docs/guide/extending.md", "# Extending the toolkit: how it fits together"),
            ("docs/guide/tree-solvers.md", "## From Python"),
            ("docs/guide/debate-judges.md", "## In Python")]


def _examples() -> list[tuple[str, str]]:
    examples = []
    for name, heading in SECTIONS:
        text = (ROOT / name).read_text()
        level = heading.split(" ")[0]
        section = text.split(heading + "\n", 1)[1]
        section = re.split(rf"\n{level} ", section, maxsplit=1)[0]  # up to the next sibling
        examples += [(name, code) for code in re.findall(r"```python\n(.*?)```", section, re.S)]
    return examples


def test_the_documented_examples_run(tmp_path, monkeypatch):
    examples = _examples()
    assert len(examples) >= 6
    monkeypatch.chdir(tmp_path)
    for name, code in examples:
        exec(compile(code, name, "exec"), {"__name__": "docs_example"})


def test_the_readme_is_a_short_guide_that_links_every_docs_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    for page in ("docs/guide/index.md", "docs/variants/index.md", "docs/benchmarks.md",
                 "LICENSE", "CITATION.cff"):
        assert f"]({page})" in readme and (ROOT / page).is_file(), page
    linked = re.findall(r"\]\((docs/[^)#]+)\)", readme)
    assert linked and all((ROOT / link).is_file() for link in linked), linked


def test_the_guides_suite_file_example_is_a_suite_psro_bench_accepts(tmp_path):
    from psro.bench.suite_file import read_suite

    guide = (ROOT / "docs/guide/benchmark-suite.md").read_text()
    example = re.findall(r"```toml\n(.*?)```", guide, re.S)
    assert len(example) == 1
    (tmp_path / "poker.toml").write_text(example[0])
    suite = read_suite(tmp_path / "poker.toml")
    assert [m.label for m in suite.games[0].methods] == ["xdo", "psro, PPO"]
    assert suite.description and suite.seeds == (0, 1, 2)
