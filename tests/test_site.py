"""The companion site: README link rewriting, the gallery and landing page generated from a small
figure index, the static scan and the browser check's judgement of constructed DevTools events and
page facts (no browser needed), plus a tiny end-to-end Sphinx build and, where Chromium is installed,
the real browser check of a constructed broken page."""
import json
import struct
import zlib
from pathlib import Path

import pandas as pd
import pytest

from ancer_lite.tooling import html_anchors, site, site_check

NOTEBOOKS = {"01_proof_checks", "02_motivation_2d"}
FIGURES = {"ancer_fig01a_l1_centre_point"}


def rewrite(text: str) -> str:
    return site.rewrite_readme(text, NOTEBOOKS, FIGURES).rstrip("\n")


def tiny_png(width: int = 3, height: int = 2) -> bytes:
    """A valid RGB PNG (white), written by hand so the test needs no image library."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff" * 3 * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def notebook_json(title: str, extra_md: str = "") -> dict:
    return {"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": [f"# {title}\n", "\n", extra_md]},
                      {"cell_type": "code", "id": "b", "execution_count": 1, "metadata": {}, "source": ["print(1)"],
                       "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]}],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


# ---- README links ---------------------------------------------------------------------------------
def test_notebook_links_go_to_the_notebook_pages():
    assert rewrite("[a](notebooks/01_proof_checks.py)") == "[a](notebooks/01_proof_checks.ipynb)"
    assert rewrite("[b](notebooks/executed/02_motivation_2d.ipynb#sec)") == "[b](notebooks/02_motivation_2d.ipynb#sec)"
    assert rewrite("[c](./notebooks/executed/)") == "[c](#the-notebooks-in-order)"


def test_figure_links_go_to_the_gallery_and_the_copied_files():
    assert rewrite("see [figures](figures/README.md) and [all](figures/)") == "see [figures](gallery.md) and [all](gallery.md)"
    name = "ancer_fig01a_l1_centre_point"
    assert rewrite(f"[pdf](figures/{name}.pdf)") == f"[pdf](figures/{name}.pdf){{.external}}"
    assert rewrite(f'![Fig 1a](figures/{name}.png "t")') == f'![Fig 1a](_extra/figures/{name}.png "t")'
    assert rewrite("[index](figures/index.tsv)") == "[index](figures/index.tsv){.external}"


def test_links_to_missing_notebooks_or_figures_raise():
    with pytest.raises(ValueError, match="09_nothing"):
        rewrite("[x](notebooks/09_nothing.py)")
    with pytest.raises(ValueError, match="ancer_fig99"):
        rewrite("[x](figures/ancer_fig99_nothing.png)")


def test_docs_pages_links_resolve_from_their_folder():
    """A docs page's relative links resolve against docs/; README.md is the landing page and docs/<name>.md the page
    beside it; a docs page that does not exist raises."""
    pages = frozenset({"claims", "performance"})
    text = ("[README](../README.md), [01](../notebooks/executed/01_proof_checks.ipynb), [p](performance.md#x), "
            "[c](../CONTRIBUTING.md)")
    assert site.rewrite_readme(text, NOTEBOOKS, FIGURES, pages, base="docs").rstrip("\n") == (
        "[README](index.md), [01](notebooks/01_proof_checks.ipynb), [p](performance.md#x), "
        "c (`CONTRIBUTING.md` in the repository)")
    assert site.rewrite_readme("[the claims](docs/claims.md)", NOTEBOOKS, FIGURES, pages).rstrip("\n") == (
        "[the claims](claims.md)")
    with pytest.raises(ValueError, match="no page 'missing'"):
        site.rewrite_readme("[x](docs/missing.md)", NOTEBOOKS, FIGURES, pages)


def test_code_spans_naming_notebooks_become_links_and_others_stay():
    assert rewrite("| `01_proof_checks` | x |") == "| [`01_proof_checks`](notebooks/01_proof_checks.ipynb) | x |"
    assert rewrite("See `figures/README.md`.") == "See [`figures/README.md`](gallery.md)."
    assert rewrite("(`notebooks/NN_name.py`) and `make test`") == "(`notebooks/NN_name.py`) and `make test`"
    # a link inside code is code, and code inside a link text is left to the link
    assert rewrite("`[a](notebooks/01_proof_checks.py)`") == "`[a](notebooks/01_proof_checks.py)`"
    assert rewrite("[`01`](notebooks/01_proof_checks.py)") == "[`01`](notebooks/01_proof_checks.ipynb)"


def test_urls_anchors_fenced_code_and_other_files():
    text = "\n".join(["[w](https://example.org/notebooks/x.py) [l](#layout)",
                      "```bash", "cat [x](notebooks/01_proof_checks.py)", "```",
                      "[the tables](data/paper/README.md) and [`benchmarks/b.py`](benchmarks/b.py)"])
    assert rewrite(text).splitlines() == [
        "[w](https://example.org/notebooks/x.py) [l](#layout)",
        "```bash", "cat [x](notebooks/01_proof_checks.py)", "```",
        "the tables (`data/paper/README.md` in the repository) and `benchmarks/b.py`"]


# ---- landing page and gallery --------------------------------------------------------------------
NBS = [site.Notebook("01_proof_checks", "01 — Proof checks"), site.Notebook("02_motivation_2d", "02 — Motivation")]


def small_index() -> pd.DataFrame:
    return pd.DataFrame({"name": ["ancer_fig01b_ring", "ancer_fig01a_centre", "ancer_fig_d_k"],
                         "notebook": ["02_motivation_2d", "02_motivation_2d", "01_proof_checks"],
                         "reproduces": ["ANCER Figure 1b", "ANCER Figure 1a", "ANCER App. D.2"],
                         "caption": ["Ring point.", "Centre point: $\\ell_2$ ball.", ""]})


def test_gallery_lists_each_figure_under_its_notebook_in_order():
    md = site.gallery_markdown(small_index(), NBS)
    lines = md.splitlines()
    order = [line for line in lines if line.startswith(("## ", "### "))]
    assert order == ["## 01 — Proof checks", "### ANCER App. D.2", "## 02 — Motivation",
                     "### ANCER Figure 1a", "### ANCER Figure 1b"]
    for name, nb in (("ancer_fig01a_centre", "02_motivation_2d"), ("ancer_fig_d_k", "01_proof_checks")):
        assert f"```{{figure}} _extra/figures/{name}.png" in lines
        entry = next(line for line in lines if line.startswith(f"`{name}`"))
        assert f"[PDF](figures/{name}.pdf){{.external}}" in entry
        assert f"[PNG](figures/{name}.png){{.external}}" in entry
        assert f"(notebooks/{nb}.ipynb)" in entry
    assert "Centre point: $\\ell_2$ ball." in lines and "Ring point." in lines


def test_gallery_rejects_bad_indexes():
    with pytest.raises(ValueError, match="caption"):
        site.gallery_markdown(small_index().drop(columns="caption"), NBS)
    bad = small_index()
    bad.loc[0, "notebook"] = "08_missing"
    with pytest.raises(ValueError, match="08_missing"):
        site.gallery_markdown(bad, NBS)


def test_landing_page_puts_the_notebooks_after_the_introduction():
    readme = "# Title\n\nWhat it is.\n\n## Install\n\nmake test\n"
    md = site.index_markdown(readme, NBS, n_figures=3)
    lines = md.splitlines()
    assert lines[0] == "# Title"
    toc = lines.index("notebooks/01_proof_checks")
    assert lines[toc + 1] == "notebooks/02_motivation_2d"
    assert lines.index("What it is.") < toc < lines.index("gallery") < lines.index("## Install")
    assert "All 3 figures" in md


def test_notebook_titles_and_order(tmp_path):
    (tmp_path / "02_b.ipynb").write_text(json.dumps(notebook_json("02 — Second")))
    (tmp_path / "01_a.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "# not a title"}]}))
    (tmp_path / "scratch.ipynb").write_text("{}")
    assert site.executed_notebooks(tmp_path) == [site.Notebook("01_a", "01_a"), site.Notebook("02_b", "02 — Second")]
    with pytest.raises(ValueError, match="executed_dir"):
        site.executed_notebooks(tmp_path / "empty")


def fake_repo(root: Path) -> Path:
    (root / "notebooks" / "executed").mkdir(parents=True)
    (root / "figures").mkdir()
    (root / "notebooks" / "executed" / "01_proof_checks.ipynb").write_text(
        json.dumps(notebook_json("01 — Proof checks", "The radius $r = \\sigma \\Phi^{-1}(p_A)$.\n\n"
                                 "The [gap](#g-gap).\n\n| term | meaning |\n| --- | --- |\n"
                                 "| <a id=\"g-gap\"></a>gap | Φ⁻¹(p_A) |\n")))
    (root / "figures" / "ancer_fig01a_l1_centre_point.png").write_bytes(tiny_png())
    (root / "figures" / "ancer_fig01a_l1_centre_point.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    (root / "figures" / "index.tsv").write_text(
        "name\tnotebook\treproduces\tcaption\nancer_fig01a_l1_centre_point\t01_proof_checks\tANCER Figure 1a\tA region.\n")
    (root / "README.md").write_text(
        "# demo — a companion\n\nRead [the checks](notebooks/01_proof_checks.py) and [the figures](figures/README.md)"
        " or the [PNG](figures/ancer_fig01a_l1_centre_point.png).\n\n## More\n\n`01_proof_checks` in [order](notebooks/)"
        " and [the claims](docs/claims.md#the-table).\n")
    (root / "docs").mkdir()
    (root / "docs" / "claims.md").write_text(
        "# Claims\n\nBack to the [README](../README.md); C1 in [01](../notebooks/executed/01_proof_checks.ipynb),"
        " [the figure](../figures/ancer_fig01a_l1_centre_point.png), [the rules](../CONTRIBUTING.md),"
        " [the gap](../notebooks/executed/01_proof_checks.ipynb#g-gap).\n\n"
        "## The table\n\nNone yet.\n")
    return root


def test_html_anchor_ids():
    assert html_anchors.anchor_ids('<a id="g-p-a"></a>p_A and <a id=\'g-gap\'> </a>') == ["g-p-a", "g-gap"]
    assert html_anchors.anchor_ids('<a id="glossary">') == ["glossary"]  # MyST's raw node of an inline tag
    assert html_anchors.anchor_ids('<a href="#x">x</a> <a id="g" class="c"></a> <span id="s"></span>') == []


def test_a_link_to_an_anchor_no_page_holds_fails_the_build(tmp_path):
    """A raw-HTML anchor is a link target on the site (`html_anchors`), and only an anchor that exists is."""
    repo = fake_repo(tmp_path / "repo")
    claims = repo / "docs" / "claims.md"
    claims.write_text(claims.read_text().replace("#g-gap", "#g-no-such-term"))
    with pytest.raises(RuntimeError, match="sphinx-build failed"):
        site.build(tmp_path / "site", tmp_path / "src", repo)
    assert not (tmp_path / "site").exists()


def test_write_source_needs_every_indexed_figure(tmp_path):
    repo = fake_repo(tmp_path / "repo")
    (repo / "figures" / "ancer_fig01a_l1_centre_point.pdf").unlink()
    with pytest.raises(ValueError, match="ancer_fig01a_l1_centre_point.pdf"):
        site.write_source(tmp_path / "src", repo)


def test_tiny_site_builds_with_working_links(tmp_path):
    """A whole Sphinx build of a one-notebook repository: warnings are errors, so every rewritten link
    resolved; the static scan finds no missing file and nothing loaded from outside the site."""
    repo = fake_repo(tmp_path / "repo")
    out = site.build(tmp_path / "site", tmp_path / "src", repo)
    html = (out / "index.html").read_text()
    assert 'href="notebooks/01_proof_checks.html"' in html and 'href="gallery.html"' in html
    assert 'href="figures/ancer_fig01a_l1_centre_point.png"' in html and 'href="#the-notebooks-in-order"' in html
    assert 'href="claims.html#the-table"' in html
    page = (out / "claims.html").read_text()
    assert 'href="index.html"' in page and 'href="notebooks/01_proof_checks.html"' in page
    assert 'href="figures/ancer_fig01a_l1_centre_point.png"' in page and "CONTRIBUTING.md</span></code> in the" in page
    assert 'href="notebooks/01_proof_checks.html#g-gap"' in page
    notebook = (out / "notebooks" / "01_proof_checks.html").read_text()
    assert '<a id="g-gap"></a>' in notebook and 'href="#g-gap"' in notebook
    assert (out / "figures" / "ancer_fig01a_l1_centre_point.pdf").exists()
    assert (out / "_static" / "mathjax" / "tex-chtml.js").exists()
    assert "cdn" not in (out / "notebooks" / "01_proof_checks.html").read_text().lower()
    assert site_check.static_failures(out) == (len(list(out.rglob("*.html"))), [])
    assert not (tmp_path / "site.partial").exists()


# ---- the check's judgement -----------------------------------------------------------------------
SITE_URL = "file:///srv/site/"


def judge(events: list[tuple[str, dict]]) -> list[str]:
    urls: dict[str, str] = {}
    return [f for m, p in events if (f := site_check.event_failure(m, p, SITE_URL, urls))]


def test_requests_must_stay_inside_the_site_folder():
    def req(i, url):
        return ("Network.requestWillBeSent", {"requestId": i, "request": {"url": url}})
    failures = judge([req("1", SITE_URL + "_static/a.js"), req("2", "data:image/png;base64,AAAA"),
                      req("3", "https://cdn.example/mathjax.js"), req("4", "file:///etc/passwd"),
                      req("5", "http://127.0.0.1:8000/x.png")])
    assert failures == ["request leaves file://: https://cdn.example/mathjax.js",
                        "request outside the site folder: file:///etc/passwd",
                        "request leaves file://: http://127.0.0.1:8000/x.png"]


def test_failed_requests_errors_and_exceptions_fail_warnings_do_not():
    failures = judge([
        ("Network.requestWillBeSent", {"requestId": "7", "request": {"url": SITE_URL + "_images/x.png"}}),
        ("Network.loadingFailed", {"requestId": "7", "errorText": "net::ERR_FILE_NOT_FOUND"}),
        ("Network.responseReceived", {"response": {"url": SITE_URL + "a", "status": 404}}),
        ("Network.responseReceived", {"response": {"url": SITE_URL + "b", "status": 200}}),
        ("Runtime.exceptionThrown", {"exceptionDetails": {"text": "Uncaught",
                                                          "exception": {"description": "TypeError: x is undefined\n at f"}}}),
        ("Runtime.consoleAPICalled", {"type": "error", "args": [{"type": "string", "value": "boom"}]}),
        ("Runtime.consoleAPICalled", {"type": "log", "args": [{"type": "string", "value": "fine"}]}),
        ("Runtime.consoleAPICalled", {"type": "warning", "args": [{"type": "string", "value": "meh"}]}),
        ("Log.entryAdded", {"entry": {"level": "error", "source": "network", "text": "Failed to load", "url": "u"}}),
        ("Log.entryAdded", {"entry": {"level": "warning", "source": "other", "text": "deprecated"}}),
    ])
    assert failures == [f"failed request {SITE_URL}_images/x.png: net::ERR_FILE_NOT_FOUND",
                        f"HTTP 404 for {SITE_URL}a", "JavaScript error: TypeError: x is undefined",
                        "console error: boom", "console error (network): Failed to load u"]


def test_page_facts_broken_images_and_unrendered_math():
    good = {"images": [{"src": "a.png", "complete": True, "naturalWidth": 10}],
            "math": [{"rendered": True, "text": "r"}], "mathjax": "done", "raw_tex": []}
    assert site_check.probe_failures(good) == []
    assert site_check.probe_failures({"images": [], "math": [], "mathjax": "not needed", "raw_tex": []}) == []
    bad = {"images": [{"src": "b.png", "complete": True, "naturalWidth": 0},
                      {"src": "c.png", "complete": False, "naturalWidth": 0}],
           "math": [{"rendered": False, "text": "\\(x\\)"}, {"rendered": True, "text": ""}],
           "mathjax": "timed out", "raw_tex": ["the radius $r$\n here"]}
    failures = site_check.probe_failures(bad)
    assert [f.split(" ")[0] for f in failures] == ["broken", "broken", "MathJax", "unrendered", "raw"]
    assert "b.png" in failures[0] and "c.png" in failures[1] and "timed out" in failures[2]
    assert failures[4] == "raw TeX left in the text: 'the radius $r$ here'"


def test_static_scan_flags_outside_resources_and_missing_files(tmp_path):
    (tmp_path / "ok.png").write_bytes(tiny_png())
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text(
        '<html><head><script src="https://cdn.example/m.js"></script><link rel="stylesheet" href="s.css">'
        '</head><body><img src="ok.png"><img srcset="ok.png 1x, gone.png 2x"><a href="https://example.org">w</a>'
        '<a href="sub/page.html#x">in</a><a href="#top">top</a><a href="nowhere.html">x</a>'
        '<div style="background: url(\'http://x.example/bg.png\')"></div></body></html>')
    (tmp_path / "sub" / "page.html").write_text('<a href="../index.html">up</a><img src="/etc/hosts">')
    (tmp_path / "s.css").write_text("@import 'https://fonts.example/f.css'; body { background: url(ok.png) }")
    pages, failures = site_check.static_failures(tmp_path)
    assert pages == 2
    assert sorted(failures) == sorted([
        "index.html: loads https://cdn.example/m.js from outside the site",
        "index.html: resource to a missing file gone.png",
        "index.html: link to a missing file nowhere.html",
        "index.html: loads http://x.example/bg.png from outside the site",
        "sub/page.html: loads /etc/hosts from outside the site",
        "s.css: loads https://fonts.example/f.css from outside the site"])


def test_absent_browser_is_reported_and_fails_only_in_ci(tmp_path, monkeypatch, capsys):
    (tmp_path / "index.html").write_text("<html><body>ok</body></html>")
    monkeypatch.setattr(site_check, "find_browser", lambda: None)
    monkeypatch.delenv("CI", raising=False)
    assert site_check.main(tmp_path) == 0
    assert site_check.NOT_RUN in capsys.readouterr().out
    monkeypatch.setenv("CI", "true")
    assert site_check.main(tmp_path) == 1
    assert site_check.NOT_RUN in capsys.readouterr().out
    monkeypatch.delenv("CI")
    assert site_check.main(tmp_path, require_browser=True) == 1
    assert site_check.main(tmp_path / "nothing") == 1


@pytest.mark.skipif(site_check.find_browser() is None, reason="chromium not installed (apt-get install chromium)")
def test_browser_catches_a_constructed_broken_page(tmp_path):
    (tmp_path / "ok.png").write_bytes(tiny_png())
    (tmp_path / "good.html").write_text('<html><body><img src="ok.png"><p>fine</p></body></html>')
    (tmp_path / "bad.html").write_text(
        '<html><body><img src="ok.png"><img src="missing.png"><p>raw $x^2$ left</p>'
        '<script>console.error("boom"); notDefined();</script></body></html>')
    results = {r.page: r for r in site_check.browser_check(tmp_path, site_check.find_browser())}
    assert results["good.html"].failures == [] and results["good.html"].images == 1
    bad = results["bad.html"]
    assert bad.images == 2
    text = "\n".join(bad.failures)
    for expected in ("broken image", "missing.png", "net::ERR_FILE_NOT_FOUND", "console error: boom",
                     "JavaScript error: ReferenceError: notDefined", "raw TeX left in the text"):
        assert expected in text, (expected, bad.failures)
