"""Benchmark suites: which games, which methods, which budgets and seeds (``psro bench``).

A :class:`Suite` is a list of :class:`SuiteGame`, each with its tier (``walkable``: exact
exploitability, OpenSpiel's CFR+ and the uniform policy as reference lines; ``large``: too
large to walk, PPO oracles, approximate exploitability at one shared best-response budget),
its budget (seconds of run time, and environment steps for trained oracles) and its methods
(:class:`Method`: a label and the :class:`psro.RunConfig` settings that make it). Every
(game, method, seed) is an ordinary run directory.

Built-in suites (:data:`SUITES`): ``walkable``, ``large``, ``full`` (both tiers),
``quick`` (every game of both, small budgets, one seed: a few minutes on 2 cores) and
``diversity`` (Diverse PSRO beside PSRO, :mod:`psro.algorithms.diverse`). A suite can
also be read from a TOML file (:mod:`psro.bench.suite_file`), in the same shape;
:func:`psro.bench.suite_file.get_suite` takes either.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from psro.bench.folder import GAME_FILES, SUITE_FILES, check_folder_names
from psro.config import MAX_SEED, RunConfig
from psro.errors import ConfigError
from psro.option_checks import check_count, check_positive

TIERS = ("walkable", "large")


@dataclass(frozen=True)
class Method:
    """A method of a suite: its ``label`` (short, shown in tables and legends) and the
    :class:`psro.RunConfig` fields that make it (``algorithm``, ``oracle``, ``meta_solver``,
    ``ppo``...; game, seed and budgets come from the suite)."""

    label: str
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteGame:
    """One game of a suite: the ``game`` string, a short ``label``, its ``tier``, the
    ``methods`` run on it, the run-time budget of every run (``time_budget_s``), the
    env-step budget of trained oracles (``env_steps``; None: time only), the exploitability
    ``thresholds`` whose crossing times are tabulated, and, for the large tier, the env steps
    of the best response that measures every method's approximate exploitability
    (``response_steps``, the same for every method and seed) and how often it is measured
    during a run (``bound_every`` iterations)."""

    game: str
    label: str
    tier: str
    methods: tuple[Method, ...]
    time_budget_s: float
    env_steps: int | None = None
    thresholds: tuple[float, ...] = (1e-1, 1e-2, 1e-3)
    response_steps: int = 200_000
    bound_every: int | None = None
    """Large tier: also measure each run's lower bound every this many iterations during the
    run, at ``response_steps`` (curves against env steps; None: only the final one)."""
    exact: bool = True
    """Large tier: measure each run's final meta-policy exactly where the game has a compiled
    kernel (:mod:`psro.kernels`); False: the lower bound at ``response_steps`` there too."""


@dataclass(frozen=True)
class Suite:
    """A named suite: its ``games``, the ``seeds`` every method runs (a deterministic method
    runs the first only: every seed would give the same run) and a one-line ``description``."""

    name: str
    games: tuple[SuiteGame, ...]
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)
    description: str = ""

    def with_seeds(self, count: int) -> Suite:
        """The suite with seeds ``0 .. count - 1`` (``count`` from 1 to ``MAX_SUITE_SEEDS``;
        :class:`ConfigError` otherwise)."""
        check_count("seeds", count, maximum=MAX_SUITE_SEEDS)
        return replace(self, seeds=tuple(range(count)))


MAX_SUITE_SEEDS = 1000
"""Most seeds a suite runs (each seed is a run per game and method)."""

EXACT = {"oracle": "exact"}
PSRO = Method("psro", {**EXACT, "algorithm": "psro", "meta_solver": "nash"})
ANYTIME = Method("anytime", {**EXACT, "algorithm": "anytime"})
XDO = Method("xdo", {**EXACT, "algorithm": "xdo"})
XDO_CFR = Method("xdo, cfr", {**EXACT, "algorithm": "xdo", "xdo_solver": "cfr"})
"""XDO with its restricted games solved by warm-started CFR+ instead of the LP."""
PSRO_PPO = Method("psro (PPO)", {"oracle": "ppo", "algorithm": "psro", "meta_solver": "nash"})
XDO_PPO = Method("xdo (PPO)", {"oracle": "ppo", "algorithm": "xdo"})
STOCHASTIC = {"greedy": False, "entropy_coef": 0.1, "warm_start": True}
SELF_PLAY = Method("self-play", {"oracle": "ppo", "algorithm": "psro", "meta_solver": "latest",
                                 "ppo": STOCHASTIC})
"""PPO self-play as the IIG-RL-Benchmark runs it: one stochastic network trained against its
latest self (warm-started, members played as the sampled policy, entropy 0.1)."""
FICTITIOUS = Method("fictitious self-play", {"oracle": "ppo", "algorithm": "psro",
                                             "meta_solver": "uniform", "ppo": STOCHASTIC})
PSRO_LARGE = Method("psro", {"oracle": "ppo", "algorithm": "psro", "meta_solver": "nash",
                             "ppo": {"greedy": False}})

TWO_PLAYER_ZERO_SUM = (PSRO, ANYTIME, XDO, XDO_CFR)
DEEP = (1e-1, 1e-2, 1e-3, 1e-4, 1e-6)
"""Thresholds of the two-player zero-sum walkable games (the accuracies papers report)."""
NPLAYER = (1e-1, 1e-2, 1e-3)
"""Thresholds of the n-player and general-sum walkable games (no equilibrium guarantee)."""
LEDUC_13 = ("universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,"
            "firstPlayer=1 1,maxRaises=2 2,numSuits=2,numRanks=13,numHoleCards=1,"
            "numBoardCards=0 1)")
"""Leduc poker's betting (antes of 1, raises of 2 then 4, two a round) with 13 ranks of 2 suits."""
WALKABLE = (
    ("kuhn_poker", "Kuhn", TWO_PLAYER_ZERO_SUM, 10, DEEP),
    ("leduc_poker", "Leduc", (*TWO_PLAYER_ZERO_SUM, PSRO_PPO, XDO_PPO), 120, DEEP),
    ("liars_dice", "Liar's dice", TWO_PLAYER_ZERO_SUM, 120, DEEP),
    ("goofspiel(num_cards=5,imp_info=True,points_order=descending)", "Goofspiel 5",
     TWO_PLAYER_ZERO_SUM, 60, DEEP),
    ("kuhn_poker(players=3)", "Kuhn, 3 players",
     (Method("psro, prd", {**EXACT, "algorithm": "psro", "meta_solver": "prd"}),
      Method("jpsro, cce", {**EXACT, "algorithm": "jpsro", "meta_solver": "cce"}), XDO), 30,
     NPLAYER),
    ("sheriff", "Sheriff (general-sum)",
     (Method("psro, nash", {**EXACT, "algorithm": "psro", "meta_solver": "nash"}),
      Method("jpsro, cce", {**EXACT, "algorithm": "jpsro", "meta_solver": "cce"}), XDO), 30,
     NPLAYER),
)
"""The walkable tier's games: spec, label, methods, seconds a run, thresholds."""
WALKABLE_LARGER = (
    ("goofspiel(num_cards=6,imp_info=True,points_order=descending)", "Goofspiel 6",
     TWO_PLAYER_ZERO_SUM, 300, DEEP),
    ("liars_dice(numdice=2,dice_sides=3)", "Liar's dice 2x3", TWO_PLAYER_ZERO_SUM, 300, DEEP),
    (LEDUC_13, "Leduc, 13 ranks", TWO_PLAYER_ZERO_SUM, 300, DEEP),
)
"""Walkable games whose solves take seconds to minutes (663,337 to 1,179,777 nodes, walked in
5-7 s), where algorithms rather than fixed costs decide; in ``walkable`` and ``full``, not in
``quick``."""
LARGE = (
    ("phantom_ttt(obstype=reveal-nothing)", "Phantom TTT"),
    ("dark_hex(gameversion=cdh,board_size=3,obstype=reveal-nothing)", "Dark Hex 3"),
    ("liars_dice(numdice=2,dice_sides=5)", "Liar's dice 2x5"),
)
LARGE_METHODS = (PSRO_LARGE, SELF_PLAY, FICTITIOUS)


def _walkable(scale: float = 1.0, ppo_steps: int | None = None,
              larger: bool = True) -> tuple[SuiteGame, ...]:
    made = []
    for game, label, methods, seconds, thresholds in WALKABLE + (WALKABLE_LARGER if larger
                                                                 else ()):
        if ppo_steps is not None:
            methods = tuple(m if m.settings.get("oracle") != "ppo" else replace(
                m, settings={**m.settings, "ppo": {"env_steps": ppo_steps}}) for m in methods)
        made.append(SuiteGame(game, label, "walkable", methods, seconds * scale,
                              thresholds=thresholds))
    return tuple(made)


def _large(seconds: float, env_steps: int, response_steps: int, every: int,
           ppo_steps: int | None = None, mc: dict | None = None) -> tuple[SuiteGame, ...]:
    methods = LARGE_METHODS
    if ppo_steps is not None or mc:
        methods = tuple(replace(m, settings={
            **m.settings, "ppo": {**m.settings.get("ppo", {}),
                                  **({"env_steps": ppo_steps} if ppo_steps else {})},
            **({"monte_carlo": mc} if mc else {})}) for m in methods)
    return tuple(SuiteGame(game, label, "large", methods, seconds, env_steps,
                           thresholds=(), response_steps=response_steps, bound_every=every)
                 for game, label in LARGE)


DIVERSE = Method("diverse", {**EXACT, "algorithm": "diverse"})
DIVERSE_PPO = Method("diverse (PPO)", {"oracle": "ppo", "algorithm": "diverse"})
CYCLIC = (("spinning_top(n=200)", "Spinning top 200", 10),
          ("disc(n=100)", "Disc game 100", 10),
          ("blotto_margin(coins=10,fields=5)", "Blotto 10 coins 5 fields", 60))
BANDIT_PPO = {"env_steps": 20_000}
"""PPO best responses in normal-form games: one decision an episode, 20,000 env steps."""


def _diversity(scale: float = 1.0) -> tuple[SuiteGame, ...]:
    """Diverse PSRO beside plain PSRO: the cyclic catalogue games with the exact oracle and
    with the PPO oracle, and Leduc with the PPO oracle."""
    made = []
    for game, label, seconds in CYCLIC:
        made.append(SuiteGame(game, label + " (exact)", "walkable", (PSRO, DIVERSE),
                              seconds * scale))
        made.append(SuiteGame(game, label + " (PPO)", "walkable", tuple(
            replace(m, settings={**m.settings, "ppo": BANDIT_PPO})
            for m in (PSRO_PPO, DIVERSE_PPO)), min(2 * seconds, 60) * scale))
    made.append(SuiteGame("leduc_poker", "Leduc (PPO)", "walkable", (PSRO_PPO, DIVERSE_PPO),
                          120 * scale))
    return tuple(made)


QUICK_MC = {"min_episodes": 64, "max_episodes": 256, "tolerance": 0.1}
SUITES: dict[str, Suite] = {
    "walkable": Suite("walkable", _walkable(), description="games small enough to walk: exact "
                      "exploitability, CFR+, the tabular solvers and the uniform policy as "
                      "reference lines"),
    "large": Suite("large", _large(10_800, 10_000_000, 500_000, 20),
                   description="games too large to walk at 10M env steps a run: PSRO against "
                               "PPO self-play and fictitious self-play"),
    "quick": Suite("quick", _walkable(0.1, ppo_steps=2000, larger=False) + _large(
        45, 12_000, 4000, 1, ppo_steps=3000, mc=QUICK_MC), seeds=(0,),
        description="a smoke test: the games of both tiers (not the three larger walkable "
                    "ones), small budgets, one seed (a few minutes): every method runs on every "
                    "game; its numbers do not rank the methods (use walkable, large or full)"),
}
SUITES["full"] = Suite("full", SUITES["walkable"].games + SUITES["large"].games,
                       description="both tiers")
SUITES["diversity"] = Suite("diversity", _diversity(), description="Diverse PSRO beside PSRO "
                            "on the cyclic games (exact and PPO oracles) and on Leduc (PPO)")


def suite_from_table(data: dict, name: str) -> Suite:
    """The suite a table describes (a suite file's, or ``suite.json``'s), unchecked; ``name``
    where it has none. ``KeyError``, ``TypeError`` or ``ValueError`` where it is malformed."""
    return Suite(str(data.get("name", name)), tuple(
        SuiteGame(str(g["game"]), str(g.get("label", g["game"])), str(g["tier"]),
                  tuple(Method(str(m["label"]), dict(m.get("settings", {})))
                        for m in g["methods"]),
                  float(g["time_budget_s"]), g.get("env_steps"),
                  tuple(float(t) for t in g.get("thresholds", (1e-1, 1e-2, 1e-3))),
                  int(g.get("response_steps", 200_000)), g.get("bound_every"),
                  bool(g.get("exact", True)))
        for g in data["games"]), tuple(data.get("seeds", (0,))))


def check_suite(suite: Suite) -> Suite:
    """Refuse a suite that cannot run, naming the game or method: an unknown tier, no
    methods, two methods with one label, no seeds, or settings that are not RunConfig fields
    (every run's full configuration is checked again when it starts)."""
    if not suite.games or not suite.seeds:
        raise ConfigError(f"suite {suite.name!r} needs at least one game and one seed")
    if len(suite.seeds) > MAX_SUITE_SEEDS:
        raise ConfigError(f"suite {suite.name!r} has {len(suite.seeds):,} seeds; at most "
                          f"{MAX_SUITE_SEEDS:,}")
    for seed in suite.seeds:
        check_count(f"suite {suite.name!r}: seed", seed, minimum=0, maximum=MAX_SEED)
    if len(set(suite.seeds)) < len(suite.seeds):
        raise ConfigError(f"suite {suite.name!r}: seeds must be distinct (a seed's runs share "
                          f"one folder); got {list(suite.seeds)}")
    check_folder_names(f"suite {suite.name!r}", "game", [g.label for g in suite.games],
                       SUITE_FILES)
    for game in suite.games:
        check_folder_names(game.label, "method", [m.label for m in game.methods], GAME_FILES)
        check_count(f"{game.label}: response_steps", game.response_steps)
        for threshold in game.thresholds:
            check_positive(f"{game.label}: a threshold", threshold)
        if game.tier not in TIERS:
            raise ConfigError(f"{game.label}: unknown tier {game.tier!r}; accepted: "
                              f"{', '.join(TIERS)}")
        if game.env_steps is not None:
            check_count(f"{game.label}: env_steps", game.env_steps)
            if not any(trains(m) for m in game.methods):
                raise ConfigError(f"{game.label}: env_steps budgets trained oracles, and none "
                                  f"of its methods trains one (all use the exact oracle); "
                                  f"leave it out")
        if not game.exact and game.tier != "large":
            raise ConfigError(f"{game.label}: exact = false is read on the large tier only "
                              f"(the walkable tier's exploitability is always exact); leave "
                              f"it out")
        if game.bound_every is not None:
            if game.tier != "large":
                raise ConfigError(f"{game.label}: bound_every is read on the large tier only "
                                  f"(its games' exploitability is a lower bound); the "
                                  f"{game.tier} tier measures exploitability exactly: leave it "
                                  f"out")
            check_count(f"{game.label}: bound_every", game.bound_every)
        labels = [m.label for m in game.methods]
        if not labels or len(set(labels)) < len(labels):
            raise ConfigError(f"{game.label}: needs methods with distinct labels; got "
                              f"{labels}")
        for method in game.methods:
            run_config(game, method, suite.seeds[0])
    return suite


def describe(suite: Suite) -> dict:
    """The suite as JSON data (a suite folder's ``suite.json``; :func:`from_description`
    reads it back)."""
    return {"name": suite.name, "seeds": list(suite.seeds), "description": suite.description,
            "games": [{"game": g.game, "label": g.label, "tier": g.tier,
                       "time_budget_s": g.time_budget_s, "env_steps": g.env_steps,
                       "thresholds": list(g.thresholds), "response_steps": g.response_steps,
                       "bound_every": g.bound_every, "exact": g.exact,
                       "methods": [{"label": m.label, "settings": m.settings}
                                   for m in g.methods]} for g in suite.games]}


def from_description(data: dict) -> Suite:
    """The suite :func:`describe` wrote (checked by :func:`check_suite`)."""
    return check_suite(replace(suite_from_table(data, ""),
                               description=str(data.get("description", ""))))


FIXED = ("game", "seed", "time_budget_s", "env_step_budget", "iterations", "lower_bound")


def trains(method: Method) -> bool:
    """Whether ``method`` trains its best responses (any oracle but ``exact``): the game's
    ``env_steps`` budgets its runs."""
    return method.settings.get("oracle", "exact") != "exact"


def run_config(game: SuiteGame, method: Method, seed: int) -> RunConfig:
    """The configuration of one run of the suite (validated)."""
    given = sorted(set(method.settings) & set(FIXED))
    if given:
        raise ConfigError(f"{game.label}, {method.label}: {', '.join(given)} come from the "
                          f"suite, not from a method's settings")
    trained = trains(method)
    bound = None
    if game.tier == "large":  # during a run at the shared budget; at its end, by the suite
        bound = {"final": False, **({"every": game.bound_every, "env_steps":
                                     game.response_steps} if game.bound_every else {})}
    return RunConfig().merged({**method.settings, "game": game.game, "seed": seed,
                               "time_budget_s": game.time_budget_s,
                               "env_step_budget": game.env_steps if trained else None,
                               "lower_bound": bound}).validate()
