"""The companion's website: a static HTML site built with Sphinx + myst-nb from the executed notebooks
(never re-executed), the README and a figure gallery, readable offline (MathJax bundled, no CDN, no
external image, font or script).

    python -m ancer_lite.tooling.site build [--out build/site]      # Sphinx source in build/site-src
    python -m ancer_lite.tooling.site check [--site build/site]     # every page in headless Chromium

`build` writes the Sphinx source (conf.py, index.md from README.md, one page per docs/*.md, gallery.md from
figures/index.tsv, the executed notebooks) into a build folder, builds it with warnings as errors and
replaces the output folder only when the build succeeded. Links of the README and the docs pages to notebooks/,
figures/, docs/ and README.md are rewritten to the site's pages and files (`rewrite_readme`). `check` is `ancer_lite.tooling.site_check`.
"""
from __future__ import annotations

import argparse
import json
import posixpath
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..core.files import REPO_ROOT

SITE_DIR = REPO_ROOT / "build" / "site"
SOURCE_DIR = REPO_ROOT / "build" / "site-src"
#: the site's files that are copied as they are (html_extra_path): figures/<name>.{png,pdf}, index.tsv
EXTRA = "_extra"
GALLERY = "gallery"
#: the repository's folder of documentation pages (`docs/<name>.md`), each a page of the site beside index.md
DOCS = "docs"
_PAGE = re.compile(r"^docs/(?P<page>[^/]+)\.md$")
NOTEBOOKS_HEADING = "The notebooks, in order"
_NOTEBOOK_NAME = re.compile(r"^\d\d_[A-Za-z0-9_]+$")


@dataclass(frozen=True)
class Notebook:
    """One executed notebook: `name` (e.g. "01_proof_checks") and `title` (its first Markdown heading)."""
    name: str
    title: str


def notebook_title(nb: dict, name: str) -> str:
    """The text of the first Markdown heading of notebook JSON `nb` (the page title Sphinx uses);
    `name` when it has none.

    Parameters
    ----------
    nb : dict
        The notebook's JSON (nbformat: "cells", each with "cell_type" and "source", a str or a list of lines).
    name : str
        The notebook's name, the title of a notebook without a Markdown heading.

    Returns
    -------
    str
        The heading's text, without its `#` marks.
    """
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        for line in src.splitlines():
            m = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
            if m:
                return m.group(1)
    return name


def executed_notebooks(executed_dir: Path) -> list[Notebook]:
    """The executed notebooks `NN_name.ipynb` in `executed_dir`, in their numbered order.

    Parameters
    ----------
    executed_dir : Path
        The folder of executed notebooks (notebooks/executed/); files not named `NN_name.ipynb` are ignored.

    Returns
    -------
    list of Notebook
        One per notebook, sorted by file name, with its title (`notebook_title`).

    Raises
    ------
    ValueError
        When the folder holds no such notebook.
    """
    paths = sorted(p for p in Path(executed_dir).glob("*.ipynb") if _NOTEBOOK_NAME.match(p.stem))
    if not paths:
        raise ValueError(f"executed_dir {executed_dir} holds no executed notebook NN_name.ipynb; "
                         "run `make all` (or one notebook) first")
    return [Notebook(p.stem, notebook_title(json.loads(p.read_text(encoding="utf-8")), p.stem)) for p in paths]


# ---- README -> index.md ---------------------------------------------------------------------------
# a Markdown link or image (text may hold one level of brackets), or an inline code span
_INLINE = re.compile(r"(?P<img>!?)\[(?P<text>(?:[^\[\]]|\[[^\]]*\])*)\]\((?P<url><[^>]*>|[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)"
                     r"|(?P<ticks>`+)(?P<code>.+?)(?P=ticks)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
#: repository files with a page or a copy in the site: (pattern, site target, plain file?)
_REPO_FILES = ((re.compile(r"^notebooks/(?:executed/)?(?P<notebook>[^/]+)\.(?:py|ipynb)$"), "notebooks/{name}.ipynb", False),
               (re.compile(r"^figures/(?P<figure>[^/]+)\.(?:png|pdf)$"), "{path}", True))


def _site_target(path: str, notebooks: set[str], figures: set[str], strict: bool = True,
                 pages: frozenset[str] = frozenset()) -> tuple[str, bool] | None:
    """Where a repository path points to in the site: (target, is_plain_file) or None when the site has
    no counterpart. Notebook sources and executed copies go to the notebook's page, figures/README.md and
    figures/ to the gallery, a figure's PNG/PDF and figures/index.tsv to the copy in the site's figures/,
    README.md to the landing page and docs/<name>.md (`pages`) to its page. A notebook, figure or docs page that
    does not exist raises ValueError when `strict`, else gives None."""
    clean = posixpath.normpath(path.lstrip("/")) if path else path
    if clean == "README.md":
        return "index.md", False
    page = _PAGE.match(clean or "")
    if page is not None:
        if page.group("page") in pages:
            return f"{page.group('page')}.md", False
        if strict:
            raise ValueError(f"a page links {path!r}, but {DOCS}/ has no page {page.group('page')!r}")
        return None
    if clean in ("notebooks", "notebooks/executed"):
        return "#" + _slug(NOTEBOOKS_HEADING), False
    if clean in ("figures", "figures/README.md"):
        return f"{GALLERY}.md", False
    for pattern, template, plain in _REPO_FILES:
        m = pattern.match(clean)
        if m is None:
            continue
        kind, name = m.lastgroup, m.group(m.lastgroup)
        known = notebooks if kind == "notebook" else figures
        if name in known:
            return template.format(name=name, path=clean), plain
        if not strict:
            return None
        where = "notebooks/executed/" if kind == "notebook" else "figures/index.tsv"
        raise ValueError(f"a page links {path!r}, but {where} has no {kind} {name!r}")
    if clean == "figures/index.tsv":
        return clean, True
    return None


def _slug(heading: str) -> str:
    """The anchor MyST gives a heading (myst_heading_anchors)."""
    from myst_parser.slugs import github_slugify

    return github_slugify(heading)


def _rewrite_inline(line: str, notebooks: set[str], figures: set[str], pages: frozenset[str], base: str) -> str:
    def link(m: re.Match) -> str:
        if m.group("ticks"):
            code = m.group("code").strip()
            name = code if code in notebooks else None
            target = (_site_target(code, notebooks, figures, strict=False, pages=pages)
                      if name is None and "/" in code else None)
            if name is not None:
                return f"[{m.group(0)}](notebooks/{name}.ipynb)"
            if target is not None:
                return f"[{m.group(0)}]({target[0]})" + ("{.external}" if target[1] else "")
            return m.group(0)
        url = m.group("url").strip("<>")
        if _SCHEME.match(url) or url.startswith("#"):
            return m.group(0)
        path, _, frag = url.partition("#")
        path = posixpath.normpath(posixpath.join(base, path)) if base else path
        target = _site_target(path, notebooks, figures, pages=pages)
        title = m.group("title") or ""
        if target is None:  # a repository file the site does not carry: keep the words, name the path
            text = m.group("text")
            return text if text.strip("`") == path else f"{text} (`{path}` in the repository)"
        dest, plain = target
        if m.group("img"):
            return f"![{m.group('text')}]({EXTRA}/{dest}{title})"
        dest = dest + ("#" + frag if frag and not dest.startswith("#") else "")
        return f"[{m.group('text')}]({dest}{title})" + ("{.external}" if plain else "")

    return _INLINE.sub(link, line)


def rewrite_readme(text: str, notebooks: set[str], figures: set[str], pages: frozenset[str] = frozenset(),
                   base: str = "") -> str:
    """README.md's (or a docs page's) Markdown with its repository links made to work inside the site (outside
    fenced code):

    - `notebooks/NN_name.py`, `notebooks/executed/NN_name.ipynb` -> the notebook's page;
    - `figures/README.md`, `figures/` -> the gallery; `notebooks/`, `notebooks/executed/` -> the list
      of notebooks on the landing page;
    - `figures/<name>.png|pdf`, `figures/index.tsv` -> the copies in the site's figures/ (images: shown);
    - inline code naming a notebook (`01_proof_checks`, `notebooks/01_proof_checks.py`) or
      `figures/README.md` becomes a link to its page;
    - `README.md` -> the landing page; `docs/<name>.md` -> that page (every page lies beside index.md);
    - links to other repository files keep their words and name the path; URLs and anchors are kept.

    Parameters
    ----------
    text : str
        The page's Markdown.
    notebooks : set of str
        The executed notebooks' names.
    figures : set of str
        The names in figures/index.tsv.
    pages : frozenset of str
        The names of the docs pages (empty: none).
    base : str
        The folder of the page being rewritten, relative to the repository's root ("" for the README, "docs" for a
        docs page), against which its relative links resolve.

    Returns
    -------
    str
        The rewritten Markdown, ending in a newline.

    Raises
    ------
    ValueError
        When a link names a notebook, figure or docs page that does not exist.
    """
    out, fence = [], None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
        elif fence is not None and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            fence = None
        elif fence is None:
            line = _rewrite_inline(line, notebooks, figures, pages, base)
        out.append(line)
    return "\n".join(out) + "\n"


def index_markdown(readme: str, notebooks: list[Notebook], n_figures: int, pages: list[str] = ()) -> str:
    """The landing page: README's title and introduction (up to its first `##` section), then the
    notebooks in order and the gallery (as toctrees, so Sphinx links and orders the pages), then the
    rest of the README. `readme` is already rewritten by `rewrite_readme`; `pages`, the docs pages' names, go into a
    hidden toctree (the README links them where it says what each holds).

    Parameters
    ----------
    readme : str
        README.md's Markdown, already rewritten by `rewrite_readme`.
    notebooks : list of Notebook
        The executed notebooks, in order (`executed_notebooks`).
    n_figures : int
        The number of figures, which the gallery's introduction states.
    pages : list of str
        The docs pages' names, for the hidden toctree (empty: no such toctree).

    Returns
    -------
    str
        index.md's Markdown.
    """
    lines = readme.splitlines()
    cut = next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))
    toc = ["", f"## {NOTEBOOKS_HEADING}", "",
           "Each page is an executed notebook as committed in `notebooks/executed/` (outputs and figures as "
           "they were computed; the site does not re-run them).", "",
           "```{toctree}", ":maxdepth: 1", "", *(f"notebooks/{nb.name}" for nb in notebooks), "```", "",
           "## Figure gallery", "",
           f"All {n_figures} figures the notebooks save, each with the paper figure it reproduces, its caption, "
           "its PDF and PNG and the notebook that draws it.", "",
           "```{toctree}", ":maxdepth: 1", "", GALLERY, "```", ""]
    if pages:
        toc += ["```{toctree}", ":hidden:", "", *pages, "```", ""]
    return "\n".join(lines[:cut] + toc + lines[cut:]) + "\n"


def gallery_markdown(index: pd.DataFrame, notebooks: list[Notebook]) -> str:
    """The gallery page from figures/index.tsv rows (columns name, notebook, reproduces, caption):
    one section per notebook (in notebook order), one entry per figure with its paper counterpart, its
    caption, the PNG, links to the PDF and PNG, and a link to the notebook's page.

    Parameters
    ----------
    index : pandas.DataFrame
        The rows of figures/index.tsv, with columns name, notebook, reproduces and caption (others ignored).
    notebooks : list of Notebook
        The executed notebooks, in order; every notebook the index names must be among them.

    Returns
    -------
    str
        gallery.md's Markdown.

    Raises
    ------
    ValueError
        When `index` lacks a column or names a notebook not in `notebooks`.
    """
    missing = [c for c in ("name", "notebook", "reproduces", "caption") if c not in index.columns]
    if missing:
        raise ValueError(f"index lacks the columns {missing}; expected name, notebook, reproduces, caption")
    titles = {nb.name: nb.title for nb in notebooks}
    unknown = sorted(set(index["notebook"]) - set(titles))
    if unknown:
        raise ValueError(f"figures/index.tsv names notebooks {unknown} that notebooks/executed/ does not hold")
    lines = ["# Figure gallery", "",
             "Every figure written by the notebooks (`ancer_lite.report.figures.save_fig`), grouped by the notebook "
             "that draws it, with the paper figure or table it reproduces.", ""]
    for nb in notebooks:
        rows = index[index["notebook"] == nb.name].sort_values("name")
        if not len(rows):
            continue
        lines += [f"## {nb.title}", "", f"Drawn in [{nb.title}](notebooks/{nb.name}.ipynb).", ""]
        for r in rows.itertuples():
            lines += [f"({r.name})=", f"### {r.reproduces}", "",
                      f"```{{figure}} {EXTRA}/figures/{r.name}.png", f":alt: {r.reproduces}", "",
                      str(r.caption).strip(), "```", "",
                      f"`{r.name}` · [PDF](figures/{r.name}.pdf){{.external}} · "
                      f"[PNG](figures/{r.name}.png){{.external}} · "
                      f"notebook [{nb.name}](notebooks/{nb.name}.ipynb)", ""]
    return "\n".join(lines)


def conf_py(project: str) -> str:
    """Sphinx's conf.py: myst-nb reading the executed notebooks without executing them, MathJax from
    the sphinx-mathjax-offline package (copied into _static; no CDN), no source copies, and the pages' raw-HTML
    anchors as link targets (`ancer_lite.tooling.html_anchors`).

    Parameters
    ----------
    project : str
        The site's name (Sphinx's project and html_title).

    Returns
    -------
    str
        The text of conf.py.
    """
    settings = {
        "project": project,
        "extensions": ["myst_nb", "sphinx.ext.mathjax", "sphinx-mathjax-offline", "ancer_lite.tooling.html_anchors"],
        "myst_enable_extensions": ["dollarmath", "amsmath", "attrs_inline"],
        "myst_heading_anchors": 3,
        "nb_execution_mode": "off",
        "nb_render_markdown_format": "myst",
        "nb_merge_streams": True,
        "mathjax_path": "mathjax/tex-chtml.js",
        "html_theme": "alabaster",
        "html_theme_options": {"page_width": "1180px", "sidebar_width": "250px", "fixed_sidebar": True,
                               "show_powered_by": False},
        "html_sidebars": {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]},
        "html_title": project,
        "html_extra_path": [EXTRA],
        "html_copy_source": False,
        "html_show_sourcelink": False,
        "exclude_patterns": [EXTRA, "**/.ipynb_checkpoints"],
    }
    body = "\n".join(f"{k} = {v!r}" for k, v in settings.items())
    return ("# Generated by `python -m ancer_lite.tooling.site build`; edit ancer_lite/tooling/site.py instead.\n" + body + "\n")


def write_source(source: Path, repo: Path = REPO_ROOT) -> Path:
    """Write the Sphinx source for the site into `source` (emptied first): conf.py, index.md (README), docs/*.md,
    gallery.md (figures/index.tsv), notebooks/NN_name.ipynb (copies of notebooks/executed/) and the
    figures' PNG/PDF under _extra/figures/. Returns `source`.

    Parameters
    ----------
    source : Path
        The folder to write (build/site-src by default in `build`); removed first when it exists.
    repo : Path
        The repository's root, whose README.md, docs/, figures/ and notebooks/executed/ are read.

    Returns
    -------
    Path
        `source`.

    Raises
    ------
    ValueError
        When figures/index.tsv lists a figure whose PNG or PDF is missing, a docs page is named index, gallery or
        conf, or a link names a notebook, figure or docs page that does not exist (`rewrite_readme`).
    """
    from ..report.figures import read_index

    notebooks = executed_notebooks(repo / "notebooks" / "executed")
    index = read_index(repo / "figures" / "index.tsv")
    absent = [f"figures/{n}.{ext}" for n in index["name"] for ext in ("png", "pdf")
              if not (repo / "figures" / f"{n}.{ext}").exists()]
    if absent:
        raise ValueError(f"figures/index.tsv lists figures whose files are missing: {absent}")
    if source.exists():
        shutil.rmtree(source)
    (source / "notebooks").mkdir(parents=True)
    (source / EXTRA / "figures").mkdir(parents=True)
    for nb in notebooks:
        shutil.copyfile(repo / "notebooks" / "executed" / f"{nb.name}.ipynb", source / "notebooks" / f"{nb.name}.ipynb")
    for name in index["name"]:
        for ext in ("png", "pdf"):
            shutil.copyfile(repo / "figures" / f"{name}.{ext}", source / EXTRA / "figures" / f"{name}.{ext}")
    if (repo / "figures" / "index.tsv").exists():
        shutil.copyfile(repo / "figures" / "index.tsv", source / EXTRA / "figures" / "index.tsv")
    names, figures = {nb.name for nb in notebooks}, set(index["name"])
    docs = sorted((repo / DOCS).glob("*.md")) if (repo / DOCS).is_dir() else []
    pages = frozenset(p.stem for p in docs)
    clash = sorted(pages & {"index", GALLERY, "conf"})
    if clash:
        raise ValueError(f"{DOCS}/ holds pages named {clash}, which the site's own pages use; rename them")
    for p in docs:
        text = rewrite_readme(p.read_text(encoding="utf-8"), names, figures, pages, base=DOCS)
        (source / f"{p.stem}.md").write_text(text, encoding="utf-8")
    readme = (repo / "README.md").read_text(encoding="utf-8")
    title = next((line[2:].strip() for line in readme.splitlines() if line.startswith("# ")), "ancer_lite")
    readme = rewrite_readme(readme, names, figures, pages)
    (source / "index.md").write_text(index_markdown(readme, notebooks, len(index), sorted(pages)), encoding="utf-8")
    (source / f"{GALLERY}.md").write_text(gallery_markdown(index, notebooks), encoding="utf-8")
    (source / "conf.py").write_text(conf_py(title.split(" — ")[0]), encoding="utf-8")
    return source


def build(out: Path = SITE_DIR, source: Path = SOURCE_DIR, repo: Path = REPO_ROOT) -> Path:
    """Write the source (`write_source`) and build the HTML site with Sphinx (warnings are errors).
    The site is built next to `out` and replaces it only when the build succeeded. Returns `out`.

    Parameters
    ----------
    out : Path
        The site's folder (the HTML pages).
    source : Path
        Where the Sphinx source is written (`write_source`).
    repo : Path
        The repository's root, as in `write_source`.

    Returns
    -------
    Path
        `out`.

    Raises
    ------
    RuntimeError
        When sphinx-build fails (`out` then stays as it was).
    """
    from sphinx.cmd.build import build_main

    write_source(source, repo)
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    args = ["-b", "html", "-W", "--keep-going", "-q", "-E", "-d", str(source / ".doctrees"), str(source), str(staging)]
    if build_main(args) != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"sphinx-build failed on {source} (warnings are errors; see above)")
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the `build` or `check` command (the module's description).

    Parameters
    ----------
    argv : list of str, optional
        The command's arguments; None: sys.argv[1:].

    Returns
    -------
    int
        The exit status: for `build`, 0 when the site was built and 1 when the build failed (the error printed to
        stderr); for `check`, `site_check.main`'s. argparse exits with 2 on bad arguments.
    """
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="build the HTML site from the executed notebooks, README and figures")
    b.add_argument("--out", type=Path, default=SITE_DIR)
    b.add_argument("--source", type=Path, default=SOURCE_DIR)
    c = sub.add_parser("check", help="open every page of the built site in headless Chromium")
    c.add_argument("--site", type=Path, default=SITE_DIR)
    c.add_argument("--require-browser", action="store_true",
                   help="fail when Chromium is absent (default: only when the environment variable CI is set)")
    args = ap.parse_args(argv)
    if args.cmd == "build":
        try:
            out = build(args.out, args.source)
        except (ValueError, RuntimeError) as err:
            print(f"site build failed: {err}", file=sys.stderr)
            return 1
        pages = len(list(out.rglob("*.html")))
        print(f"site built: {out} ({pages} pages); open {out / 'index.html'}")
        return 0
    from .site_check import main as check_main

    return check_main(args.site, args.require_browser)


if __name__ == "__main__":
    sys.exit(main())
