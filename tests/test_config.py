"""One configuration surface: Python keywords, TOML files and flags merge the same way."""

import pytest

import psro
import solvers
from psro.cli import main


# -- one configuration surface --------------------------------------------------------------
def test_python_toml_and_flags_merge_option_tables_the_same_way(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text('game = "biased_rps"\nmeta_solver = "prd"\niterations = 2\n'
                      '[meta_solver_options]\niterations = 300\nstep = 0.1\n')
    base = psro.RunConfig.from_toml(config)
    merged = base.merged({"meta_solver_options": {"step": 0.2}, "seed": 3})
    assert merged.meta_solver_options == {"iterations": 300, "step": 0.2} and merged.seed == 3
    run = psro.PSRO(config=base, meta_solver_options={"step": 0.2}, seed=3)
    in_full = {**solvers.options("prd"), "iterations": 300, "step": 0.2}  # defaults written
    assert run.config.meta_solver_options == in_full
    assert main(["run", "--config", str(config), "--meta-solver-option", "step=0.2",
                 "--seed", "3", "--out", str(tmp_path / "r"), "--quiet"]) == 0
    saved = psro.load_run(tmp_path / "r").config
    assert saved.meta_solver_options == in_full and saved.seed == 3
    with pytest.raises(psro.ConfigError, match="unknown setting"):
        psro.PSRO("kuhn_poker", iteratons=3)


