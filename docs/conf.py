"""Sphinx configuration for torch_backend's documentation (built by ``make docs``).

The C ABI reference comes from Doxygen's XML through Breathe; ``make docs`` runs Doxygen first
and passes the XML directory in ``TB_DOXYGEN_XML``.  Warnings are errors (``sphinx-build -W``).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))


def _read(path: str, pattern: str) -> str:
    """The first group of ``pattern`` in the source file ``path`` (relative to the repository)."""
    found = re.search(pattern, (HERE.parent / path).read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"docs/conf.py: {path} has no line matching {pattern!r}")
    return found.group(1)


project = "torch_backend"
author = "the torch_backend authors"
copyright = "2026, the torch_backend authors"
# Written once each: the package version in pyproject.toml, the ABI in vendor.h.  Pages say
# |release| (X.Y.Z), |version| (X.Y), |abi| (major.minor) and |abi_major|.
release = _read("pyproject.toml", r'^version = "([0-9.]+)"$')
version = ".".join(release.split(".")[:2])
_abi = [
    _read("include/torch_backend/vendor.h", rf"^#define TB_ABI_VERSION_{part} ([0-9]+)$")
    for part in ("MAJOR", "MINOR")
]
rst_prolog = f"""
.. |abi| replace:: {_abi[0]}.{_abi[1]}
.. |abi_major| replace:: {_abi[0]}
"""

extensions = [
    "breathe",
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.graphviz",
    "tb_bench",
    "tb_coverage",
    "tb_run",
    "tb_slots",
    "tb_timeline",
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
