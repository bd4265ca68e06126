"""Benchmark: exact exploitability in phantom tic-tac-toe and dark hex 3 by the compiled
placement kernel (:mod:`psro.kernels.placement`), beside raw pyspiel.

Run: ``python experiments/bench_placement_kernel.py [--histories 1000000] [--games ...]
[--skip-rules] [--rules-only] [--members 30]`` (``--rules-only``: step 1 alone).

1. The kernel's rules against pyspiel's on ``--histories`` seeded random histories of each
   variant: at every decision the legal actions and the information-state tensor (and string,
   in phantom tic-tac-toe), at the end the returns; and the information sets it numbers.
2. The uniform policy's exact exploitability, with the time split (numbering the information
   sets, asking the policy, the walk), the histories the walk visits and its histories per
   second per core beside pyspiel's (one core applying random actions to states).
3. One network per player (a short PSRO run's PPO best responses, played by their most
   probable action, the PPO oracle's default, and sampled) and a meta-policy of ``--members``
   networks a player (freshly initialised and sampled: what they cost does not depend on
   their weights): the time split and the peak memory of the process. A pure policy's walk
   skips every history neither player reaches, so it is short.

``--asking [--members N]``: only the asking of N networks a player at every information set, as
the kernel asks them (several batches at once, one torch thread each) and, for reference, one
whole batch at a time by the module's own forward on torch's threads, side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import sys
import tempfile
import time

import numpy as np
import pyspiel
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_exact_kernel import asked_one_batch_at_a_time  # noqa: E402

import psro  # noqa: E402
from psro.extensive_form.members import UniformMember  # noqa: E402
from psro.kernels import placement_exact  # noqa: E402
from psro.kernels import placement_trie as trie_walk  # noqa: E402
from psro.kernels.asking import batch_probs  # noqa: E402
from psro.kernels.base import threads  # noqa: E402
from psro.kernels.exact import exact_exploitability  # noqa: E402
from psro.kernels.placement import PlacementRules, tries  # noqa: E402
from psro.rl.networks import ActorCritic, NeuralPolicy  # noqa: E402

GAMES = ("phantom_ttt(obstype=reveal-nothing,gameversion=classical)",
         "phantom_ttt(obstype=reveal-nothing,gameversion=abrupt)",
         "dark_hex(gameversion=cdh,board_size=3,obstype=reveal-nothing)",
         "dark_hex(gameversion=adh,board_size=3,obstype=reveal-nothing)")


def pyspiel_rate(game, seconds: float = 5.0) -> float:
    """Histories (states made by applying an action) per second of pyspiel on one core,
    playing random games."""
    rng = np.random.default_rng(0)
    made, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(int(legal[rng.integers(len(legal))]))
            made += 1
    return made / (time.perf_counter() - start)


def check_rules(spec: str, histories: int) -> None:
    """Every decision of ``histories`` seeded random histories against pyspiel."""
    game = pyspiel.load_game(spec)
    rules = PlacementRules.of(game)
    both = tries(rules)
    start, _ = rules.replay(())
    rng = np.random.default_rng(0)
    wrong = decisions = 0
    began = time.perf_counter()
    out = np.zeros((2 * rules.cells + 2, 4), dtype=np.int64)
    for _ in range(histories):
        state, actions, seen = game.new_initial_state(), [], []
        while not state.is_terminal():
            p = state.current_player()
            seen.append((p, state.legal_actions(), state.information_state_tensor(p),
                         state.information_state_string(p)
                         if rules.game_name == "phantom_ttt" else None))
            actions.append(int(rng.choice(seen[-1][1])))
            state.apply_action(actions[-1])
        played = trie_walk.play(start, np.array(actions, dtype=np.int64), rules.win, rules.cells,
                           rules.abrupt, both[0].arrays, both[1].arrays, out)
        wrong += played != len(actions)
        for i, (p, legal, tensor, string) in enumerate(seen):
            decisions += 1
            node = int(out[i, 1])
            mine = [c for c in range(rules.cells) if out[i, 2] >> c & 1]
            bad = out[i, 0] != p or mine != legal or \
                both[p].tensors(rules, p, node, node + 1)[0].tolist() != tensor
            if string is not None:
                bad |= rules.info_strings(p, both[p].paths(node, node + 1))[0] != string
            wrong += bool(bad)
        winner = int(out[len(actions), 3])
        expected = [0.0, 0.0] if winner == 2 else [1.0 if q == winner else -1.0 for q in (0, 1)]
        wrong += state.returns() != expected
    print(f"{spec}: {histories:,} random histories ({decisions:,} decisions) against pyspiel "
          f"in {time.perf_counter() - began:.0f} s: {wrong} disagreements (legal actions, "
          f"information-state tensors{' and strings' if rules.game_name == 'phantom_ttt' else ''}"
          f", returns); information sets {both[0].nodes:,} + {both[1].nodes:,}")


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def row(label: str, game, seats, reference: float) -> None:
    start = time.perf_counter()
    result = exact_exploitability(game, seats)
    total = time.perf_counter() - start
    s = result.seconds
    per_core = result.histories / s["walk"] / threads()
    print(f"| {label} | {result.exploitability:.6f} | {result.information_sets:,} | "
          f"{s['rules']:.1f} | {s['tabularise']:.1f} | {s['walk']:.1f} | {total:.1f} | "
          f"{result.histories:.3g} | {per_core:,.0f} ({per_core / reference:.0f}x) | "
          f"{peak_gib():.1f} |")


def networks(spec: str, count: int, seed: int) -> list[list]:
    game = pyspiel.load_game(spec)
    size, actions = game.information_state_tensor_size(), game.num_distinct_actions()
    seats = []
    for p in range(2):
        members = []
        for k in range(count):
            torch.manual_seed(seed + 1000 * p + k)
            members.append(NeuralPolicy(p, ActorCritic(size, actions), {"player": p}))
        seats.append([(m, 1.0 / count) for m in members])
    return seats


def evaluate(spec: str, members: int) -> None:
    game = pyspiel.load_game(spec)
    reference = pyspiel_rate(game)
    print(f"\n{spec} ({threads()} threads; pyspiel makes {reference:,.0f} histories/s on "
          f"one core)\n\n| policy | exploitability | information sets asked | numbering s | "
          f"asking s | walk s | total s | histories walked | histories/s a core (x pyspiel) "
          f"| peak GiB |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    row("uniform", game, [[(UniformMember(0), 1.0)], [(UniformMember(1), 1.0)]], reference)
    for greedy in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            run = psro.PSRO(spec, oracle="ppo", out=f"{tmp}/run", lower_bound={"final": False},
                            ppo={"env_steps": 20_000, "greedy": greedy})
            run.run(iterations=1)
            trained = [[(run.population[p][-1], 1.0)] for p in range(2)]
        how = "its most probable action (greedy, the default)" if greedy else "sampled"
        row(f"one PPO network a player, {how}", game, trained, reference)
    row(f"{members} networks a player", game, networks(spec, members, 0), reference)


def asking(spec: str, members: int) -> None:
    """Asking ``members`` networks a player at every information set (the sequence forms,
    not the walk), as the kernel asks them and, for reference, one whole batch at a time by the
    module's own forward on torch's threads: seconds of each and the ratio."""
    game = pyspiel.load_game(spec)
    rules = PlacementRules.of(game)
    both = tries(rules, ())
    seats = networks(spec, members, 0)
    times, sums = [], []
    for reference in (False, True):
        seconds = {"tabularise": 0.0, "walk": 0.0}
        with asked_one_batch_at_a_time(placement_exact) if reference else \
                contextlib.nullcontext():
            sfs, asked = placement_exact.sequence_forms(rules, both, seats, batch_probs, seconds)
        times.append(seconds["tabularise"])
        sums.append(sfs)
    for player in range(2):  # the same sums, bit for bit
        np.testing.assert_array_equal(sums[0][player], sums[1][player])
    print(f"{spec}: {members} networks a player, {asked:,} information sets asked: "
          f"{times[0]:.1f} s as the kernel asks them ({threads()} threads), {times[1]:.1f} s one "
          f"whole batch at a time (reference): {times[1] / times[0]:.2f}x; the same sequence "
          f"forms bit for bit")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=1_000_000)
    parser.add_argument("--rules-only", action="store_true",
                        help="check the kernel's rules against pyspiel, and nothing else")
    parser.add_argument("--games", nargs="+", default=list(GAMES))
    parser.add_argument("--skip-rules", action="store_true")
    parser.add_argument("--members", type=int, default=30)
    parser.add_argument("--asking", action="store_true",
                        help="only time asking --members networks a player, as the kernel asks "
                             "them and one whole batch at a time")
    args = parser.parse_args()
    for spec in args.games:
        if args.asking:
            asking(spec, args.members)
            continue
        if not args.skip_rules:
            check_rules(spec, args.histories)
        if not args.rules_only:
            evaluate(spec, args.members)


if __name__ == "__main__":
    main()
