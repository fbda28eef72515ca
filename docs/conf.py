"""Sphinx configuration: MyST Markdown pages, furo, API reference from docstrings."""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))

project = "reactive_aio"
author = "the reactive_aio developers"
copyright = "2026, the reactive_aio developers"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "rules_table",
    "operator_pages",
]

source_suffix = {".md": "markdown"}
master_doc = "index"
exclude_patterns = ["_build", "changes"]
html_theme = "furo"
html_title = "reactive_aio"
html_static_path = ["_static"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
nitpicky = False
suppress_warnings = ["myst.xref_missing"]
