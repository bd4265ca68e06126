"""Run directories: the only code that knows their layout. :class:`RunWriter` saves a run
after every iteration; :func:`load` reads any run directory back into a config and a
:class:`~psro.state.RunState`.

Layout (format ``FORMAT_VERSION``; nothing is pickled):

- ``config.json``: the :class:`~psro.config.RunConfig`, written once;
- ``run.json``: the format version, how the run is evaluated (``"exact"`` or ``"sampled"``)
  and, for exact runs, every player's information-state keys and their digest;
- ``iterations/NNNNNN.npz``: one record per iteration, written once (atomically: temporary
  file, fsync, rename): the members that joined, their tables, the payoff-table entries that
  were evaluated, the metrics row, the meta-strategies, the clocks, and the byte length of
  every log file after it, with a SHA-256 checksum over all of it;
- ``networks/player{p}_member{k}.pt`` + ``.json``: neural members (state dict + metadata);
- ``metrics.csv``, ``metrics.jsonl``, ``mixtures.jsonl``, ``oracle_log.jsonl``: appended
  after every iteration (one row per iteration; the oracle's diagnostics rows).

Saving an iteration costs the same whatever the run's length. A killed run leaves complete
records only; a resume trusts the records, cuts every log back to the length the last record
vouches for (rebuilding the metrics and mixtures files from the records if they are shorter),
and continues. Directories of formats 1 and 2 (``checkpoint.npz``, rewritten every iteration)
are read as they are, and converted to records when resumed.
"""

from psro.storage.checkpoint.members import network_path
from psro.storage.checkpoint.reader import SavedRun, load, read_config
from psro.storage.checkpoint.writer import FORMAT_VERSION, VIEWS, RunWriter

__all__ = ["FORMAT_VERSION", "VIEWS", "RunWriter", "SavedRun", "load", "network_path",
           "read_config"]
