"""Benchmark suites: the field's games, the toolkit's methods and baselines, reference lines
measured in the same command, and one report per suite (``psro bench``).

- :mod:`psro.bench.suites`: what a suite is (games, tiers, methods, budgets, seeds) and the
  built-in suites, with :mod:`psro.bench.suite_file` (suites written as TOML files, and
  :func:`~psro.bench.suite_file.get_suite`, a suite by name or file);
- :mod:`psro.bench.references`: OpenSpiel's CFR+ and the uniform policy (walkable tier);
- :mod:`psro.bench.evaluation`: shared-budget approximate exploitability and head-to-head
  results (large tier);
- :mod:`psro.bench.runner`: running a suite into a folder of run directories, with
  :mod:`psro.bench.folder` (which suite and seeds a folder holds, and which folders a call may
  use), :mod:`psro.bench.preflight` (every method's run checked before anything is
  written), :mod:`psro.bench.plan` (the runs in order, and running one) and
  :mod:`psro.bench.jobs` (runs and reference lines as jobs any process can run);
- :mod:`psro.bench.dispatch`: where the jobs run: one at a time, several at once on this
  machine (:mod:`psro.bench.local_jobs`) or across a Ray cluster (:mod:`psro.bench.ray_jobs`,
  with :mod:`psro.bench.folder_sync` carrying the files), with :mod:`psro.bench.progress`;
- :mod:`psro.bench.report`: its report and figures, with :mod:`psro.bench.results_table`
  (the results table) and :mod:`psro.bench.completion` (which planned runs have ended, for a
  report made before the suite finished).
"""

from psro.bench.report import write_suite_report
from psro.bench.runner import run_suite
from psro.bench.suite_file import get_suite
from psro.bench.suites import SUITES, Method, Suite, SuiteGame

__all__ = ["SUITES", "Method", "Suite", "SuiteGame", "get_suite", "run_suite",
           "write_suite_report"]
