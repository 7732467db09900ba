"""Links between the notebooks' sources: every `[text](NN_name.ipynb#anchor)` and in-page `[text](#anchor)` of a
notebook's Markdown names a notebook that exists and an anchor it holds (a raw-HTML `<a id>` such as the primer's
glossary rows, or a heading's MyST/GitHub slug), so a reader's click lands on the term in Jupyter, on GitHub and on
the site (whose build fails on an unknown anchor, `ancer_lite.tooling.html_anchors`)."""
import re

from myst_parser.slugs import github_slugify

from ancer_lite.core.files import REPO_ROOT
from ancer_lite.tooling.html_anchors import anchor_ids

SOURCES = sorted((REPO_ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
LINK = re.compile(r"\]\((?P<nb>\d\d_[A-Za-z0-9_]+\.ipynb)?#(?P<anchor>[^)\s]+)\)")


def markdown(path) -> str:
    """The Markdown of a jupytext percent source: its comment lines with the `# ` taken off, joined so that a
    link broken over two lines reads as one."""
    lines = [line[2:] if line.startswith("# ") else line[1:] for line in path.read_text(encoding="utf-8").splitlines()
             if line.startswith("#")]
    return "\n".join(lines)


def anchors(path) -> set[str]:
    text = markdown(path)
    headings = {github_slugify(m.group(1).strip()) for m in re.finditer(r"^#{1,6} (.+)$", text, re.MULTILINE)}
    return set(anchor_ids(text)) | headings


def test_the_sources_are_found():
    assert [p.stem[:2] for p in SOURCES] == [f"{i:02d}" for i in range(len(SOURCES))] and len(SOURCES) >= 8


def test_every_link_to_a_notebook_anchor_resolves():
    held = {p.stem: anchors(p) for p in SOURCES}
    links, broken = 0, []
    for p in SOURCES:
        for m in LINK.finditer(markdown(p).replace("\n", " ")):
            target = m.group("nb")[:-len(".ipynb")] if m.group("nb") else p.stem
            links += 1
            if m.group("anchor") not in held.get(target, set()):
                broken.append(f"{p.name}: {m.group(0)}")
    assert not broken, broken
    assert links >= 6 * 20  # each of 02-07 links its terms to the glossary's rows


def test_the_glossary_rows_are_anchored():
    """Each row of the primer's glossary carries its own anchor, the target of the later notebooks' links."""
    text = markdown(REPO_ROOT / "notebooks" / "00_primer.py")
    rows = [line for line in text.split("## Glossary", 1)[1].splitlines()
            if line.startswith("| ") and "---" not in line]
    assert len(rows) >= 25
    assert all(anchor_ids(row) for row in rows[1:]), [row for row in rows[1:] if not anchor_ids(row)]
