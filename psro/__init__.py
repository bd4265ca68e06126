"""PSRO on OpenSpiel games: the loop and its parts (oracles, evaluators, backends), run
directories, reports.

>>> import psro
>>> run = psro.PSRO("kuhn_poker", "exact", "nash")
>>> round(run.run(iterations=10)[-1]["value_p0"], 6)
-0.055556
"""

from psro import backends, oracles
from psro.config import RunConfig
from psro.errors import (
    BackendError,
    ConfigError,
    GameTooLargeError,
    MetaSolverError,
    OutputFileError,
    PolicyError,
    RunDirectoryError,
    ToolkitError,
    TrainingError,
    UnreadSettingError,
)
from psro.evaluation.exploitability import (
    Exploitability,
    PolicyExploitability,
    exact_exploitability,
    exploitability,
    game_tree,
)
from psro.extensive_form.policies import (
    MetaPolicy,
    TabularPolicy,
    from_openspiel,
    to_openspiel,
    to_openspiel_tabular,
)
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.loop import PSRO
from psro.payoffs import PayoffTable
from psro.storage.runs import Run, load_run
from solvers._version import __version__

__all__ = [
    "BackendError", "ConfigError", "Exploitability", "GameTooLargeError", "MetaPolicy",
    "MetaSolverError", "OutputFileError", "PSRO", "PayoffTable", "PolicyError",
    "PolicyExploitability", "Run", "RunConfig", "RunDirectoryError", "SequenceFormGame",
    "TabularPolicy", "ToolkitError", "TrainingError", "UnreadSettingError", "__version__",
    "backends", "exact_exploitability", "exploitability", "from_openspiel", "game_tree",
    "load_run", "oracles", "to_openspiel", "to_openspiel_tabular",
]
