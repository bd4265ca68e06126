"""Benchmark: exact exploitability by the compiled liar's dice kernel, beside OpenSpiel.

Run: ``python experiments/bench_exact_kernel.py [--histories 1000000] [--skip-openspiel]
[--rules-only]`` (``--rules-only``: step 1 alone).

1. The kernel's rules against pyspiel's on ``--histories`` seeded random histories of liar's
   dice with 2 dice of 5 sides (legal actions, information-state strings and tensors, returns),
   with the histories per second of pyspiel playing them (the reference) and of the check.
2. Exact exploitability beside OpenSpiel's ``exploitability.nash_conv`` (the same uniform policy)
   on the games both can evaluate: 1 die of 4 and of 6 sides, 2 dice of 3 sides; the seconds of
   each and the difference.
3. Liar's dice 2x5 (2^20 public states, 15.7M information sets), out of OpenSpiel's reach:
   the uniform policy, one PPO network and a meta-policy of a short PSRO run (uniform and PPO
   members), with the time split (asking the policies at every information set, the compiled
   walk); and, for reference, the one network asked as the kernel asked networks before
   (:func:`psro.kernels.asking.asked_in_order`): one batch at a time, by the module's own
   forward on torch's threads.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time

import numpy as np
import pyspiel

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psro  # noqa: E402
from psro.extensive_form.members import UniformMember  # noqa: E402
from psro.kernels import liars_dice_exact  # noqa: E402
from psro.kernels.exact import exact_exploitability  # noqa: E402
from psro.kernels.liars_dice import LiarsDiceRules  # noqa: E402

LARGE = "liars_dice(numdice=2,dice_sides=5)"
WALKABLE = ("liars_dice(numdice=1,dice_sides=4)", "liars_dice(numdice=1,dice_sides=6)",
            "liars_dice(numdice=2,dice_sides=3)")


def check_rules(spec: str, histories: int) -> None:
    """Every decision of ``histories`` seeded random histories against pyspiel's legal actions,
    information-state strings and tensors, and every return."""
    game = pyspiel.load_game(spec)
    rules = LiarsDiceRules.of(game)
    hands = {tuple(h): i for i, h in enumerate(rules.hands.tolist())}
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(min(histories, 100_000)):  # the reference: pyspiel playing alone
        state = game.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(int(legal[rng.integers(len(legal))]))
    pyspiel_rate = min(histories, 100_000) / (time.perf_counter() - start)
    wrong = decisions = 0
    for _ in range(histories):
        state = game.new_initial_state()
        dealt, mask = [], 0
        while not state.is_terminal():
            legal = state.legal_actions()
            if state.is_chance_node():
                dealt.append(int(legal[rng.integers(len(legal))]))
                state.apply_action(dealt[-1])
                continue
            p = state.current_player()
            hand = hands[tuple(sorted(dealt[p * rules.numdice:(p + 1) * rules.numdice]))]
            masks = np.array([mask], dtype=np.int64)
            obs, mine = rules.info_tensors(masks, p)
            decisions += 1
            wrong += np.flatnonzero(mine[hand]).tolist() != legal or \
                rules.info_strings(masks)[hand] != state.information_state_string(p) or \
                obs[hand].tolist() != state.information_state_tensor(p)
            action = int(legal[rng.integers(len(legal))])
            if action < rules.num_bids:
                mask |= 1 << action
            state.apply_action(action)
        h = [hands[tuple(sorted(dealt[p * rules.numdice:(p + 1) * rules.numdice]))]
             for p in range(2)]
        bidder = (bin(mask).count("1") - 1) % 2
        winner = bidder if rules.true_bid[mask.bit_length() - 1, h[0], h[1]] else 1 - bidder
        wrong += state.returns()[winner] != 1.0
    terminals = rules.sides ** (2 * rules.numdice) * (2 ** rules.num_bids - 1)
    start = time.perf_counter()
    exact_exploitability(game, uniform_seats())
    walk_s = time.perf_counter() - start
    print(f"{spec}: {histories:,} random histories ({decisions:,} decisions) against pyspiel: "
          f"{wrong} disagreements (legal actions, information-state strings and tensors, "
          f"returns)")
    print(f"pyspiel plays {pyspiel_rate:,.0f} random histories/s; one exact evaluation of the "
          f"uniform policy covers all {terminals:,} terminal histories in {walk_s:.1f} s "
          f"({terminals / walk_s:,.0f}/s, tensors and policy included)")


def uniform_seats() -> list:
    return [[(UniformMember(0), 1.0)], [(UniformMember(1), 1.0)]]


def beside_openspiel() -> None:
    from open_spiel.python import policy as openspiel_policy
    from open_spiel.python.algorithms import exploitability

    print("\n| game | kernel NashConv | kernel s | OpenSpiel NashConv | OpenSpiel s | "
          "difference |\n| --- | --- | --- | --- | --- | --- |")
    for spec in WALKABLE:
        game = pyspiel.load_game(spec)
        start = time.perf_counter()
        mine = exact_exploitability(game, uniform_seats()).nash_conv
        kernel_s = time.perf_counter() - start
        start = time.perf_counter()
        theirs = exploitability.nash_conv(game, openspiel_policy.UniformRandomPolicy(game))
        theirs_s = time.perf_counter() - start
        print(f"| {spec} | {mine:.12f} | {kernel_s:.2f} | {theirs:.12f} | {theirs_s:.2f} | "
              f"{abs(mine - theirs):.1e} |")


def large() -> None:
    game = pyspiel.load_game(LARGE)
    print(f"\n{LARGE}: exact exploitability (uniform policy, a PPO run's meta-policy)")
    rows = [("uniform policy", uniform_seats())]
    with tempfile.TemporaryDirectory() as tmp:
        run = psro.PSRO(LARGE, oracle="ppo", out=f"{tmp}/run", lower_bound={"final": False},
                        ppo={"env_steps": 20_000})
        run.run(iterations=2)
        pops, mixtures = run.population, run.mixtures
        network = pops[0][-1], pops[1][-1]
        rows.append(("one PPO network a player", [[(network[0], 1.0)], [(network[1], 1.0)]]))
        rows.append((f"meta-policy of {len(pops[0])} members a player",
                     [[(m, float(w)) for m, w in zip(pop, mix, strict=True)]
                      for pop, mix in zip(pops, mixtures, strict=True)]))
        print("| policy | exploitability | information sets asked | asking s | walk s | "
              "total s |\n| --- | --- | --- | --- | --- | --- |")
        for label, seats in rows:
            _row(label, game, seats)
        with asked_one_batch_at_a_time(liars_dice_exact):
            _row("one PPO network a player, asked one whole batch at a time (reference)", game,
                 rows[1][1])


@contextlib.contextmanager
def asked_one_batch_at_a_time(module):
    """The kernel ``module`` asks its policies as it did before
    :func:`psro.kernels.asking.asked_in_order`: one batch after the other, each by the
    module's own forward on torch's threads (the reference of the asking time)."""
    kept = module.asked_in_order
    module.asked_in_order = lambda ask, policy, makers: (ask(policy, m()) for m in makers)
    try:
        yield
    finally:
        module.asked_in_order = kept


def _row(label: str, game, seats) -> None:
    start = time.perf_counter()
    result = exact_exploitability(game, seats)
    total = time.perf_counter() - start
    print(f"| {label} | {result.exploitability:.6f} | {result.information_sets:,} | "
          f"{result.seconds['tabularise']:.1f} | {result.seconds['walk']:.1f} | {total:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=1_000_000)
    parser.add_argument("--rules-only", action="store_true",
                        help="check the kernel's rules against pyspiel, and nothing else")
    parser.add_argument("--skip-openspiel", action="store_true",
                        help="leave out the comparison with OpenSpiel's exploitability")
    args = parser.parse_args()
    check_rules(LARGE, args.histories)
    if args.rules_only:
        return
    if not args.skip_openspiel:
        beside_openspiel()
    large()


if __name__ == "__main__":
    main()
