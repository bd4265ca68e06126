"""No hidden global state: what a part changes in the process (torch threads and random
state, the recursion limit, the plotting backend) is put back."""

import subprocess
import sys

import torch
from conftest import ROOT, blas_threads

import psro


# -- no hidden global state -----------------------------------------------------------------
def test_training_leaves_torch_threads_and_random_state_as_they_were():
    threads = torch.get_num_threads()
    torch.manual_seed(1234)
    expected = torch.rand(3)
    torch.manual_seed(1234)
    config = psro.RunConfig(game="kuhn_poker", oracle="ppo",
                            ppo={"env_steps": 600, "num_envs": 8, "steps_per_update": 128})
    psro.PSRO(config=config).run(iterations=1)
    assert torch.get_num_threads() == threads
    assert torch.equal(torch.rand(3), expected)


def test_recursion_limit_restored_and_report_import_keeps_the_plotting_backend():
    limit = sys.getrecursionlimit()
    psro.SequenceFormGame(psro.PSRO("kuhn_poker").tree.game)
    assert sys.getrecursionlimit() == limit
    code = ("import matplotlib; matplotlib.use('svg'); import psro.reports; "
            "print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "svg", out.stderr


def test_a_run_and_a_tree_solve_use_one_blas_thread_and_give_the_count_back():
    """Inside a run (seen by a callback at every iteration) and a tree solve (seen by the
    exploitability it measures) numpy's BLAS has one thread; after them, the caller's count."""
    from threadpoolctl import threadpool_limits

    import psro.extensive_form.tree_solvers as tree_solvers

    seen = []
    with threadpool_limits(limits=2, user_api="blas"):
        assert set(blas_threads()) == {2}
        psro.PSRO("kuhn_poker", algorithm="xdo", callbacks=(
            lambda run, row: seen.append(blas_threads()),)).run(iterations=3)
        measure = tree_solvers.exact_exploitability
        try:
            tree_solvers.exact_exploitability = lambda *a: (seen.append(blas_threads()),
                                                            measure(*a))[1]
            tree_solvers.solve_tree(psro.game_tree("kuhn_poker"), "dcfr", max_iterations=3)
        finally:
            tree_solvers.exact_exploitability = measure
        assert set(blas_threads()) == {2}
    assert len(seen) >= 4 and all(set(counts) == {1} for counts in seen)


def test_judge_training_uses_one_blas_thread_and_gives_the_count_back():
    """The debate judge's training (games.judge, which cannot import psro) limits BLAS itself:
    seen by its epochs' input function."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from games import judge

    rng = np.random.default_rng(0)
    params = [rng.normal(size=(4, 3)), np.zeros(3), rng.normal(size=(3, 10)), np.zeros(10)]
    seen = []

    def inputs():
        seen.append(blas_threads())
        return rng.normal(size=(8, 4))

    with threadpool_limits(limits=2, user_api="blas"):
        judge._fit(params, np.arange(8), inputs, 2, 1e-3, rng)
        assert set(blas_threads()) == {2}
    assert len(seen) == 2 and all(set(counts) == {1} for counts in seen)
