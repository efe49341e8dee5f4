"""Sphinx configuration for torch_backend's documentation (built by ``make docs``).

The C ABI reference comes from Doxygen's XML through Breathe; ``make docs`` runs Doxygen first
and passes the XML directory in ``TB_DOXYGEN_XML``.  Warnings are errors (``sphinx-build -W``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

project = "torch_backend"
author = "the torch_backend authors"
copyright = "2026, the torch_backend authors"
release = "0.1.0"

extensions = [
    "breathe",
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.graphviz",
    "tb_coverage",
    "tb_slots",
]

breathe_projects = {
    "torch_backend": os.environ.get("TB_DOXYGEN_XML", str(HERE.parent / "build/docs/doxygen/xml"))
}
breathe_default_project = "torch_backend"
breathe_domain_by_extension = {"h": "c"}
breathe_show_define_initializer = True

graphviz_output_format = "svg"
autodoc_member_order = "bysource"
autodoc_typehints = "description"
nitpicky = False
exclude_patterns = ["_build"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
html_theme = "alabaster"
html_theme_options = {"description": "one C interface, any accelerator, a PyTorch device"}
html_static_path: list[str] = []
