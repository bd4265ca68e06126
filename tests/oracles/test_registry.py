"""A user-registered oracle by name, from Python and TOML: it answers what the built-in exact
oracle answers by another route; registry errors."""

import numpy as np
import pytest
from conftest import numbers

import psro
from psro.backends import Task
from psro.cli import main
from psro.extensive_form.policies import TabularPolicy
from psro.oracles import Response


# -- an oracle defined outside the package --------------------------------------------------
def _best_response(tree, player, plans):
    return tree.best_response(player, plans)


class RecentAverageResponse:
    """Best response to the uniform average of the opponents' ``recent`` newest members (all of
    them when 0): fictitious play's oracle. With ``recent = 0`` and the ``uniform`` meta-solver
    it answers what the built-in exact oracle answers, by another route."""

    name = "recent_average"

    def __init__(self, context):
        options = dict(context.config.oracle_options)
        self.recent = options.pop("recent", 0)
        if options or not isinstance(self.recent, int) or self.recent < 0:
            raise psro.ConfigError(f"recent_average takes recent (an integer >= 0); got "
                                   f"{context.config.oracle_options}")
        self.tree = context.require_tree("recent_average")

    def tasks(self, iteration, populations, mixtures):
        plans = []
        for pop in populations:
            members = pop[-self.recent:] if self.recent else pop
            plans.append(np.mean([m.realization_plan(self.tree) for m in members], axis=0))
        return [Task(_best_response, (self.tree, p, plans)) for p in range(len(populations))]

    def responses(self, iteration, results):
        return [Response(TabularPolicy(p, probs, name=f"avg_p{p}_it{iteration}",
                                       metadata={"iteration": iteration}))
                for p, (probs, _) in enumerate(results)]


if "recent_average" not in psro.oracles.names():
    psro.oracles.register("recent_average", RecentAverageResponse)


def test_registered_oracle_runs_by_name_from_python_and_toml(tmp_path):
    ours = psro.PSRO("leduc_poker", "recent_average", "uniform").run(iterations=6)
    builtin = psro.PSRO("leduc_poker", "exact", "uniform").run(iterations=6)
    assert numbers(ours) == numbers(builtin)  # two routes to fictitious play agree
    config = tmp_path / "run.toml"
    config.write_text('game = "leduc_poker"\noracle = "recent_average"\nmeta_solver = "nash"\n'
                      'iterations = 5\n[oracle_options]\nrecent = 2\n')
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    loaded = psro.load_run(tmp_path / "r")
    api = psro.PSRO(config=psro.RunConfig.from_toml(config)).run()
    assert numbers(loaded.metrics) == numbers(api)
    assert loaded.population[1][-1].name == "avg_p1_it5"
    resumed = psro.PSRO.resume(tmp_path / "r")
    assert numbers(resumed.run(iterations=7)[:6]) == numbers(api)


def test_registry_errors():
    with pytest.raises(psro.ConfigError, match="unknown oracle 'dqn'; accepted: exact, ppo"):
        psro.PSRO("kuhn_poker", "dqn")
    with pytest.raises(psro.ConfigError, match="recent_average takes recent"):
        psro.PSRO("kuhn_poker", "recent_average", oracle_options={"recnt": 1})
    with pytest.raises(psro.ConfigError, match="already registered"):
        psro.oracles.register("exact", RecentAverageResponse)
    with pytest.raises(psro.ConfigError, match="takes no options"):
        psro.PSRO("kuhn_poker", "exact", oracle_options={"x": 1})


