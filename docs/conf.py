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
    "tb_bench",
    "tb_coverage",
    "tb_slots",
    "tb_zoo",
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
# pydata-sphinx-theme, the theme PyTorch's own documentation builds on: a wide content column,
# light and dark modes, and Sphinx's search (an index shipped with the pages, so it works
# offline and from file://).
html_theme = "pydata_sphinx_theme"
html_title = "torch_backend"
html_theme_options = {
    "logo": {"text": "torch_backend"},
    "navbar_align": "left",
    # The pages are listed in the left sidebar (templates/tb-site-nav.html), the current one
    # opened to its sections; the header keeps search and the light/dark switch.
    "navbar_center": [],
    "navbar_end": ["search-button-field", "theme-switcher"],
    "navbar_persistent": [],
    "secondary_sidebar_items": [],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "pygments_light_style": "tango",
    "pygments_dark_style": "github-dark",
}
html_sidebars = {"**": ["tb-site-nav"]}
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["torch_backend.css"]
