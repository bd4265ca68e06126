"""PSRO on OpenSpiel games: populations, exact evaluation, oracles, the loop and run files."""

from psro.config import ConfigError, RunConfig
from psro.exploitability import Exploitability, exact_exploitability
from psro.loop import PSRO, Run, load_run
from psro.oracles import ExactBestResponse
from psro.payoffs import PayoffTable
from psro.policies import (
    MetaPolicy,
    TabularPolicy,
    from_openspiel,
    to_openspiel,
    to_openspiel_tabular,
)
from psro.runs import RunDirectoryError
from psro.sequence_form import GameTooLargeError, SequenceFormGame

__all__ = [
    "ConfigError", "ExactBestResponse", "Exploitability", "GameTooLargeError", "MetaPolicy",
    "PSRO", "PayoffTable", "Run", "RunConfig", "RunDirectoryError", "SequenceFormGame",
    "TabularPolicy", "exact_exploitability", "from_openspiel", "load_run", "to_openspiel",
    "to_openspiel_tabular",
]
