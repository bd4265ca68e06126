"""Games: any OpenSpiel game string plus our normal-form catalogue, behind one ``Game`` type.

``games`` knows nothing of PSRO.
"""

import games.debate  # noqa: F401 - registers the debate game with OpenSpiel
from games.catalog import CATALOG
from games.loading import Game, GameError, catalog_names, load, register
from games.probe import check_specs

__all__ = ["CATALOG", "Game", "GameError", "catalog_names", "check_specs", "load", "register"]
