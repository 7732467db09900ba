"""A Sphinx extension for the site: the raw-HTML anchors of a page (`<a id="g-p-a"></a>`, as in the
primer's glossary) become link targets, so `[p_A](00_primer.ipynb#g-p-a)` leads to the glossary's row on
the site as it does in Jupyter and on GitHub, and a link to an anchor that no page holds still fails the
build (warnings are errors).

The anchors are registered as anonymous labels of Sphinx's standard domain, which MyST consults for a
link's `#fragment` (`myst_parser`'s reference resolver) after the headings' anchors.
"""
from __future__ import annotations

import re

#: the opening tag of an anchor element whose only attribute is its id, `<a id="name">` (MyST gives the opening
#: and closing tags of inline HTML as separate raw nodes)
_ANCHOR = re.compile(r"""<a\s+id=["']([A-Za-z][A-Za-z0-9_\-.:]*)["']\s*/?>""")


def anchor_ids(html: str) -> list[str]:
    """The ids of the anchors `<a id="…">` (no other attribute) in a piece of raw HTML, in order.

    Parameters
    ----------
    html : str
        Raw HTML (one inline or block fragment of a Markdown cell).

    Returns
    -------
    list of str
        The anchors' ids; other elements and attributes are ignored.
    """
    return _ANCHOR.findall(html)


def register_anchors(app, doctree) -> None:
    """Sphinx's `doctree-read` handler: each raw-HTML anchor of the page read becomes an anonymous label
    (name and id the anchor's id) of the standard domain. An id already registered by another page is a
    warning (an error in the site's build): a link to it could not say which page it means.

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The running Sphinx application (its environment's current document is the page read).
    doctree : docutils.nodes.document
        The page's doctree, whose `raw` HTML nodes are searched.

    Returns
    -------
    None
    """
    from docutils import nodes
    from sphinx.util import logging

    std = app.env.domains.standard_domain
    docname = app.env.docname
    for node in doctree.findall(nodes.raw):
        if "html" not in node.get("format", "").split():
            continue
        for name in anchor_ids(node.astext()):
            known = std.anonlabels.get(name)
            if known is not None and known[0] != docname:
                logging.getLogger(__name__).warning(
                    f"HTML anchor id {name!r} is defined in both {known[0]!r} and {docname!r}", location=node)
                continue
            std.anonlabels[name] = (docname, name)


def setup(app) -> dict:
    """Register the extension with Sphinx (`extensions = [..., "ancer_lite.tooling.html_anchors"]`).

    Parameters
    ----------
    app : sphinx.application.Sphinx
        The application loading the extension.

    Returns
    -------
    dict
        The extension's metadata: its version, and that it is safe for parallel reading and writing.
    """
    app.connect("doctree-read", register_anchors)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
