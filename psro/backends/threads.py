"""Threads: the toolkit's numpy and scipy work runs on one BLAS thread.

The dense products of a run are matrix-vector sized: a meta-policy's realization plan
``w @ plans`` (a few dozen members by 24,571 sequences on liar's dice), a new member's row of
the payoff table. OpenBLAS splits such a product over every core, and its threads spin while
they wait for each other. On an idle two-core machine two threads halve a product of that size,
which a whole run does not notice; when another process keeps one of the cores busy (a second
run, a test suite, a browser), the same product takes several times as long as on one thread,
and an ``xdo`` run on liar's dice 1.5-1.6 times as long
(``python experiments/bench_blas_threads.py [--busy]`` measures both settings in one process;
its figures are in the benchmarks page, "One BLAS thread").

:func:`one_blas_thread` limits the BLAS libraries that numpy and scipy loaded (OpenBLAS, MKL,
through ``threadpoolctl``) to one thread for the length of a block and restores them after it. A
run (:meth:`psro.PSRO.run`), a tree solve (:func:`psro.extensive_form.tree_solvers.solve_tree`)
and every ``psro`` command run inside it; the ``processes`` backend's workers run on one BLAS
thread for their whole life (:func:`blas_on_one_thread_for_good`). Torch's threads are not BLAS
threads here (its CPU build runs its own OpenMP pool, set by the PPO oracle) and are left as
they are. The debate judge's training sets the same limit itself (``games`` does not import
``psro``). One thread also makes a run's numbers independent of the machine's core count: the
last bits of a BLAS sum follow how its threads split it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from threadpoolctl import threadpool_limits


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block, every loaded BLAS library runs on one thread; the earlier thread
    counts are restored when it ends (also on an exception). Nested blocks are harmless."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def blas_on_one_thread_for_good() -> None:
    """In a worker process of the toolkit's own: numpy's and scipy's BLAS on one thread for the
    rest of the process (they are imported first: only loaded libraries can be limited)."""
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401

    threadpool_limits(limits=1, user_api="blas")
