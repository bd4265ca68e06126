"""Sphinx configuration of the psro-toolkit documentation (``make docs``: warnings are errors)."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("_ext"))

project = "psro-toolkit"
author = "psro-toolkit authors"
copyright = "2026, psro-toolkit authors"
from solvers._version import __version__ as release  # noqa: E402, F401 (read by Sphinx)

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "psro_columns",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_mock_imports = ["ray"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
html_theme = "furo"
html_title = "psro-toolkit"
exclude_patterns = ["_build", "_ext", "api/generated/*.__main__.rst"]
suppress_warnings = ["myst.header"]
