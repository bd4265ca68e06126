"""The shape of the code: every import of psro, games and solvers (at module level or inside a
function) goes one way, so every module has a rank below that of every module importing it;
solvers stands alone and games knows nothing of PSRO; the front ends (the command line, reports)
are imported by no part; psro's top holds few loose modules; modules and functions stay small."""

import ast

from conftest import ROOT

PACKAGES = ("psro", "games", "solvers")
FRONT_ENDS = ("psro.cli", "psro.reports", "psro.bench")
MAX_LOOSE = 13
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 350, 80
PSRO_MODULE_LINES, PSRO_FUNCTION_LINES = 320, 62
"""Every module and function; psro's own, tighter."""


def _modules() -> dict[str, object]:
    found = {}
    for package in PACKAGES:
        for file in (ROOT / package).rglob("*.py"):
            parts = list(file.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = file
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """Every toolkit module that ``module`` imports, wherever the import statement is."""
    file = MODULES[module]
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            found |= {_resolve(a.name) for a in node.names if a.name.split(".")[0] in PACKAGES}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            if base.split(".")[0] in PACKAGES:
                found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES
                          else _resolve(base) for a in node.names}
    return found - {None, module}


GRAPH = {module: _imports(module) for module in MODULES}


def _ranks() -> dict[str, int]:
    """Each module's rank: one more than the highest rank it imports (0 for none). A cycle
    fails, naming its modules in order."""
    ranks: dict[str, int] = {}
    visiting: list[str] = []

    def rank(module: str) -> int:
        if module in ranks:
            return ranks[module]
        assert module not in visiting, "import cycle: " + " -> ".join(
            visiting[visiting.index(module):] + [module])
        visiting.append(module)
        ranks[module] = 1 + max((rank(dep) for dep in GRAPH[module]), default=-1)
        visiting.pop()
        return ranks[module]

    for module in sorted(GRAPH):
        rank(module)
    return ranks


def test_every_import_goes_one_way():
    ranks = _ranks()
    assert len(ranks) == len(MODULES) > 80
    for module, deps in GRAPH.items():
        for dep in deps:
            assert ranks[dep] < ranks[module], f"{module} (rank {ranks[module]}) imports " \
                                               f"{dep} (rank {ranks[dep]})"


def test_solvers_stand_alone_games_know_no_psro_and_no_part_imports_a_front_end():
    for module, deps in GRAPH.items():
        if module.startswith("solvers"):
            assert all(d.startswith("solvers") for d in deps), (module, deps)
        if module.startswith("games"):
            assert not any(d.startswith("psro") for d in deps), (module, deps)
        front = module == "psro" or module.startswith(FRONT_ENDS)
        if not front:
            wrong = [d for d in deps if d.startswith(FRONT_ENDS)]
            assert not wrong, f"{module} imports the front end {wrong[0]}"


def test_the_packages_show_the_architecture():
    loose = sorted(p.name for p in (ROOT / "psro").glob("*.py"))
    assert len(loose) <= MAX_LOOSE, loose
    for package in ("algorithms", "oracles", "rl", "extensive_form", "evaluation", "backends",
                    "storage", "reports", "cli"):
        assert (ROOT / "psro" / package / "__init__.py").is_file(), package


def test_small_modules_and_functions():
    for module, file in MODULES.items():
        mine = module.startswith("psro")
        most = PSRO_MODULE_LINES if mine else MAX_MODULE_LINES
        longest = PSRO_FUNCTION_LINES if mine else MAX_FUNCTION_LINES
        lines = file.read_text().splitlines()
        assert len(lines) <= most, f"{module}: {len(lines)} lines"
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                assert length <= longest, f"{module}.{node.name}: {length} lines"
