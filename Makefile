# Set-up and checks. `make run` and `make test` each create .venv when it is missing.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install run test test-quick lint docs bench clean

install: $(STAMP)

# torch is installed first, pinned, so that pip takes the CPU build on disk and never a CUDA build.
$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[test]"
	touch $(STAMP)

# Each `make run` writes a new run directory, runs/default-YYYYmmdd-HHMMSS.
run: $(STAMP)
	@out=runs/default-$$(date +%Y%m%d-%H%M%S); \
	$(VENV)/bin/psro run --game kuhn_poker --oracle ppo --meta-solver nash \
		--iterations 20 --seed 0 --out $$out && \
	echo "next: $(VENV)/bin/psro report $$out  (figures, tables and the run's provenance in $$out/report)"

lint: $(STAMP)
	@echo "make lint: ruff on the sources, tests and the docs' extension"
	$(VENV)/bin/ruff check solvers games psro experiments tests docs/_ext

# The documentation site (Sphinx with MyST Markdown, the furo theme): docs/ -> build/docs/index.html.
# The guide, the variant pages and the benchmarks are Markdown; the API reference is generated
# from the docstrings. Every warning (a broken reference, a docstring Sphinx cannot read) fails.
docs: $(STAMP)
	@echo "make docs: Sphinx builds the guide and the API reference into build/docs (about 50 s on two cores; it prints only warnings, which fail the build)"
	rm -rf build/docs docs/api/generated
	$(PY) -m sphinx -E -W --keep-going -q -j auto -b html docs build/docs
	@echo "make docs: build/docs/index.html written"

# The whole suite, in two pytest-xdist worker processes (a test file stays in one worker, so a
# file's fixtures are made once): about 7 minutes on two idle cores. `make test-quick` leaves out
# the tests marked slow (end-to-end runs of many iterations, subprocesses, clusters).
PYTEST_WORKERS := -n 2 --dist loadfile
test: lint docs
	@echo "make test: pytest, the whole suite, in two worker processes"
	$(PY) -m pytest $(PYTEST_WORKERS)

test-quick: $(STAMP)
	$(PY) -m pytest $(PYTEST_WORKERS) -m "not slow"

# Benchmarks need the bench extra (cvxpy, ECOS for OpenSpiel's LP). BENCH_ARGS=--quick for a
# smoke run, --full to add the 60-minute Leduc PPO run. Then the benchmark suite SUITE (default
# quick: every game of both tiers in a few minutes; walkable, large or full for the real thing)
# into runs/bench-SUITE, resumed where it stopped, with its report in runs/bench-SUITE/report.
SUITE ?= quick
bench: $(STAMP)
	$(PY) -m pip install -q -e ".[bench]"
	$(PY) experiments/bench_all.py $(BENCH_ARGS)
	$(VENV)/bin/psro bench $(SUITE) --out runs/bench-$(SUITE)

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache
