"""Checks of the built companion site (`python -m ancer_lite.tooling.site check`).

Two parts:

- a static scan of every HTML file (no browser needed): no page loads a resource (script, stylesheet,
  image, font, frame) from outside the site folder, and every relative link or source names a file
  that exists in the site (`static_failures`);
- a real headless Chromium (Debian's `chromium`) driven over the Chrome DevTools Protocol with
  `websocket-client`: every page is opened from file://, its images are loaded and MathJax allowed to
  finish, and the page fails on a broken image (not complete or naturalWidth 0), a failed request, a
  request that leaves the site folder (another file:// path or any network URL), a math element
  without MathJax output, raw TeX delimiters (`\\(`, `\\[`, `$$`, `$...$`) left in the text, an
  uncaught JavaScript error or a console error (`event_failure`, `probe_failures`).

Without Chromium the browser part prints "site browser check NOT RUN: chromium not found; ..." and
does not fail, unless the environment variable CI is set (or `--require-browser` is given).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: executables tried in order ($CHROMIUM first)
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
NOT_RUN = "site browser check NOT RUN: chromium not found; install with apt-get install chromium"
#: URL schemes a page may load without leaving the site (file:// is further limited to the site folder)
LOCAL_SCHEMES = ("file", "data", "blob", "about")
PAGE_TIMEOUT_S = 60.0
#: (tag, attribute) pairs that make the browser load a resource, as opposed to a link a reader follows
_RESOURCE_ATTRS = {("script", "src"), ("img", "src"), ("img", "srcset"), ("iframe", "src"), ("source", "src"),
                   ("source", "srcset"), ("video", "src"), ("video", "poster"), ("audio", "src"),
                   ("embed", "src"), ("object", "data"), ("input", "src"), ("track", "src")}
_LOADED_LINK_RELS = {"stylesheet", "icon", "shortcut", "preload", "modulepreload", "prefetch", "manifest",
                     "apple-touch-icon"}
_CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)|@import\s+['\"]([^'\"]+)['\"]")


@dataclass
class PageResult:
    """What the browser saw on one page."""
    page: str
    images: int = 0
    math: int = 0
    failures: list[str] = field(default_factory=list)


# ---- static scan ---------------------------------------------------------------------------------
class _Refs(HTMLParser):
    """Collects (kind, url) from a page: kind "resource" (the browser loads it) or "link" (a reader follows it)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        for (t, attr) in _RESOURCE_ATTRS:
            if t == tag and a.get(attr):
                urls = [u.strip().split()[0] for u in a[attr].split(",") if u.strip()] if attr == "srcset" else [a[attr]]
                self.refs += [("resource", u) for u in urls]
        if tag == "link" and a.get("href"):
            rels = set(a.get("rel", "").lower().split())
            self.refs.append(("resource" if rels & _LOADED_LINK_RELS else "link", a["href"]))
        if tag == "a" and a.get("href"):
            self.refs.append(("link", a["href"]))
        if a.get("style"):
            self.refs += [("resource", m.group(1) or m.group(2)) for m in _CSS_URL.finditer(a["style"])]
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.refs += [("resource", m.group(1) or m.group(2)) for m in _CSS_URL.finditer(data)]


def local_target(url: str, page: Path, site: Path) -> Path | None | str:
    """Where `url` (as written in `page`) points: a Path inside `site` for a relative or file:// URL,
    None for an in-page anchor, or the URL itself (a str) when it leaves the site folder.

    Parameters
    ----------
    url : str
        The URL of a link or resource.
    page : Path
        The file that holds it, against whose folder a relative URL resolves.
    site : Path
        The site's folder.

    Returns
    -------
    Path or None or str
        The normalised path inside `site`, None for an anchor, a query or a data:, blob:, about:, javascript: or
        mailto: URL, else `url` itself.
    """
    parts = urlsplit(url)
    if not parts.scheme and not parts.netloc and not parts.path:
        return None  # "#anchor" or "?query"
    if parts.scheme in ("data", "blob", "about", "javascript", "mailto"):
        return None
    if parts.scheme == "file":
        path = Path(unquote(parts.path))
    elif parts.scheme or parts.netloc:
        return url
    else:
        path = page.parent / unquote(parts.path)
    path = Path(os.path.normpath(path))
    try:
        path.relative_to(site.resolve())
    except ValueError:
        return url
    return path


def static_failures(site: Path) -> tuple[int, list[str]]:
    """Scan every HTML page under `site` (and its CSS files): a resource from outside the site, or a
    relative link/source to a file that does not exist, is a failure. Returns (pages scanned, failures).

    Parameters
    ----------
    site : Path
        The built site's folder.

    Returns
    -------
    tuple of (int, list of str)
        The number of HTML pages scanned, and one line per failure naming the file and the URL.
    """
    site = Path(site).resolve()
    failures: list[str] = []
    pages = sorted(site.rglob("*.html"))
    files = [(p, "html") for p in pages] + [(p, "css") for p in sorted(site.rglob("*.css"))]
    for path, kind in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if kind == "html":
            parser = _Refs()
            parser.feed(text)
            refs = parser.refs
        else:
            refs = [("resource", m.group(1) or m.group(2)) for m in _CSS_URL.finditer(text)]
        rel = path.relative_to(site)
        for ref_kind, url in refs:
            target = local_target(url.strip(), path, site)
            if isinstance(target, str):
                if ref_kind == "resource":
                    failures.append(f"{rel}: loads {url} from outside the site")
            elif target is not None and not target.exists():
                failures.append(f"{rel}: {ref_kind} to a missing file {url}")
    return len(pages), failures


# ---- the browser's view --------------------------------------------------------------------------
#: run in each page after its load event; resolves to the facts `probe_failures` judges
PROBE_JS = r"""
(async (timeoutMs) => {
  const deadline = Date.now() + timeoutMs;
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const left = () => Math.max(0, deadline - Date.now());
  const imgs = Array.from(document.images);
  imgs.forEach(img => { if (img.loading === 'lazy') img.loading = 'eager'; });
  await Promise.all(imgs.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener('load', done, {once: true});
    img.addEventListener('error', done, {once: true});
    setTimeout(done, left());
  })));
  const mathEls = Array.from(document.querySelectorAll('span.math, div.math'));
  let mathjax = 'not needed';
  if (mathEls.length) {
    // MathJax's own script runs before the load event; allow its start-up a few seconds at most
    const startBy = Date.now() + Math.min(10000, left());
    while (Date.now() < startBy && !(window.MathJax && MathJax.startup && MathJax.startup.promise)) await sleep(50);
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      mathjax = await Promise.race([MathJax.startup.promise.then(() => 'done', e => 'failed: ' + e),
                                    sleep(left()).then(() => 'timed out')]);
    } else {
      mathjax = 'not loaded';
    }
  }
  const prose = document.body.cloneNode(true);
  prose.querySelectorAll('script, style, pre, code, textarea, kbd, samp, mjx-container, span.math, div.math, .highlight')
       .forEach(el => el.remove());
  const raw = [];
  const re = /\$\$|\\\(|\\\[|\$[^\s$][^$\n]{0,200}?\$/g;
  const text = prose.textContent;
  let m;
  while ((m = re.exec(text)) !== null && raw.length < 20) raw.push(text.slice(Math.max(0, m.index - 30), m.index + 40));
  return {
    images: imgs.map(i => ({src: i.currentSrc || i.src, complete: i.complete, naturalWidth: i.naturalWidth})),
    math: mathEls.map(el => ({rendered: el.querySelector('mjx-container') !== null,
                              text: el.textContent.slice(0, 80)})),
    mathjax: mathjax,
    raw_tex: raw,
  };
})
"""


def probe_failures(probe: dict) -> list[str]:
    """Failures in the facts `PROBE_JS` collected on one page: broken images (not complete or
    naturalWidth 0), math elements without MathJax output (or MathJax absent, failed or timed out
    where math exists), raw TeX delimiters left in the prose.

    Parameters
    ----------
    probe : dict
        `PROBE_JS`'s result: "images" (src, complete, naturalWidth), "math" (rendered, text), "mathjax" ("done",
        "not needed", "not loaded", "timed out" or "failed: ...") and "raw_tex" (snippets); a missing key counts as
        empty.

    Returns
    -------
    list of str
        One line per failure; empty for a clean page.
    """
    out = [f"broken image {img['src']} (complete={img['complete']}, naturalWidth={img['naturalWidth']})"
           for img in probe.get("images", []) if not img.get("complete") or not img.get("naturalWidth")]
    math = probe.get("math", [])
    if math and probe.get("mathjax") != "done":
        out.append(f"MathJax {probe.get('mathjax')} on a page with {len(math)} math elements")
    out += [f"unrendered math {m['text']!r}" for m in math if not m.get("rendered")]
    out += [f"raw TeX left in the text: {' '.join(s.split())!r}" for s in probe.get("raw_tex", [])]
    return out


def _remote_object_text(obj: dict) -> str:
    return str(obj.get("value", obj.get("description", obj.get("type", ""))))


def event_failure(method: str, params: dict, site_url: str, urls: dict[str, str]) -> str | None:
    """The failure a DevTools event reports, or None. `site_url` is the site folder's file:// URL (a
    request must stay under it), `urls` maps request ids to URLs (filled from requestWillBeSent).

    Parameters
    ----------
    method : str
        The event's DevTools method, e.g. "Network.requestWillBeSent".
    params : dict
        The event's parameters.
    site_url : str
        The site folder's file:// URL, ending in "/".
    urls : dict of str to str
        Request id -> URL, filled in place from Network.requestWillBeSent events, so that a failed request is
        named by its URL.

    Returns
    -------
    str or None
        The failure: a request that leaves the site folder or fails, an HTTP status >= 400, an uncaught JavaScript
        exception or a console error; None for any other event.
    """
    if method == "Network.requestWillBeSent":
        url = params["request"]["url"]
        urls[params["requestId"]] = url
        scheme = urlsplit(url).scheme
        if scheme not in LOCAL_SCHEMES:
            return f"request leaves file://: {url}"
        if scheme == "file" and not url.startswith(site_url):
            return f"request outside the site folder: {url}"
    elif method == "Network.loadingFailed":
        return f"failed request {urls.get(params['requestId'], params['requestId'])}: {params.get('errorText', '')}"
    elif method == "Network.responseReceived":
        status = params["response"].get("status", 0)
        if status >= 400:
            return f"HTTP {status} for {params['response'].get('url')}"
    elif method == "Runtime.exceptionThrown":
        d = params["exceptionDetails"]
        text = d.get("exception", {}).get("description") or d.get("text", "")
        return f"JavaScript error: {text.splitlines()[0] if text else d}"
    elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        return "console error: " + " ".join(_remote_object_text(a) for a in params.get("args", []))
    elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
        e = params["entry"]
        return f"console error ({e.get('source')}): {e.get('text')} {e.get('url', '')}".rstrip()
    return None


def find_browser() -> str | None:
    """The Chromium executable: $CHROMIUM if set, else the first of `BROWSER_NAMES` on PATH."""
    if os.environ.get("CHROMIUM"):
        return shutil.which(os.environ["CHROMIUM"])
    return next((p for p in map(shutil.which, BROWSER_NAMES) if p), None)


class DevTools:
    """A headless Chromium and one DevTools websocket to it (flattened sessions)."""

    def __init__(self, browser: str, start_timeout: float = 60.0) -> None:
        import websocket

        self._profile = tempfile.mkdtemp(prefix="ancer-site-chromium-")
        self._log = open(Path(self._profile) / "chromium.log", "wb")
        self.proc = subprocess.Popen(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-default-apps", "--mute-audio", "--window-size=1280,900",
             "--remote-debugging-port=0", f"--user-data-dir={self._profile}", "about:blank"],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + start_timeout
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"{browser} did not start its DevTools endpoint: "
                                   + (Path(self._profile) / "chromium.log").read_text(errors="replace")[-2000:])
            time.sleep(0.1)
        port, path = port_file.read_text().split()[:2]
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=PAGE_TIMEOUT_S,
                                              suppress_origin=True, enable_multithread=False)
        self._id = 0
        self.events: list[tuple[str | None, str, dict]] = []

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = PAGE_TIMEOUT_S) -> dict:
        """Send one command and return its result (events that arrive meanwhile are kept in `events`).

        Parameters
        ----------
        method : str
            The DevTools command, e.g. "Page.navigate".
        params : dict, optional
            Its parameters; None: none.
        session : str, optional
            The session (an attached tab) that runs it; None: the browser itself.
        timeout : float
            Seconds to wait for the answer.

        Returns
        -------
        dict
            The command's result (empty when it has none).

        Raises
        ------
        RuntimeError
            When the browser answers with an error.
        TimeoutError
            When no answer came within `timeout` seconds.
        """
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout
        while True:
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"], reply.get("params", {})))
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method}: no answer in {timeout:.0f} s")

    def wait_event(self, method: str | None, session: str, timeout: float = PAGE_TIMEOUT_S) -> bool:
        """Read events until `method` arrives on `session` (True) or `timeout` passes (False); with
        `method` None, just collect the events of the next `timeout` seconds.

        Parameters
        ----------
        method : str or None
            The event awaited; an event of it kept already in `events` for `session` answers True at once.
        session : str
            The session whose event counts.
        timeout : float
            The most seconds to wait.

        Returns
        -------
        bool
            Whether the event arrived (always False with `method` None).
        """
        import websocket

        if method and any(s == session and m == method for s, m, _ in self.events):
            return True
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                reply = json.loads(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                break
            if "method" in reply:
                self.events.append((reply.get("sessionId"), reply["method"], reply.get("params", {})))
                if method and reply["method"] == method and reply.get("sessionId") == session:
                    return True
        return False

    def close(self) -> None:
        try:
            if getattr(self, "ws", None) is not None:
                self.ws.close()
        finally:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            self._log.close()
            shutil.rmtree(self._profile, ignore_errors=True)


def check_page(dt: DevTools, page: Path, site: Path) -> PageResult:
    """Open `page` in a fresh tab, wait for its load event, its images and MathJax, and collect its failures.

    Parameters
    ----------
    dt : DevTools
        The browser.
    page : Path
        The HTML file, inside `site`.
    site : Path
        The site's folder, which the page's requests must stay in.

    Returns
    -------
    PageResult
        The page (relative to `site`), its numbers of images and math elements, and its failures (empty: clean).
    """
    result = PageResult(str(page.relative_to(site)))
    target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    try:
        for domain in ("Page", "Runtime", "Network", "Log"):
            dt.call(f"{domain}.enable", session=session)
        dt.events.clear()
        nav = dt.call("Page.navigate", {"url": page.as_uri()}, session=session)
        if nav.get("errorText"):
            result.failures.append(f"navigation failed: {nav['errorText']}")
            return result
        if not dt.wait_event("Page.loadEventFired", session):
            result.failures.append(f"no load event in {PAGE_TIMEOUT_S:.0f} s")
        probe = dt.call("Runtime.evaluate", {"expression": f"({PROBE_JS})({int(PAGE_TIMEOUT_S * 1000) - 5000})",
                                             "awaitPromise": True, "returnByValue": True}, session=session)
        if "exceptionDetails" in probe:
            result.failures.append(f"the probe failed: {probe['exceptionDetails'].get('text')}")
        else:
            facts = probe["result"]["value"]
            result.images, result.math = len(facts["images"]), len(facts["math"])
            result.failures += probe_failures(facts)
        dt.wait_event(None, session, timeout=0.3)  # late console errors
        urls: dict[str, str] = {}
        site_url = site.resolve().as_uri() + "/"
        for s, method, params in dt.events:
            if s == session:
                failure = event_failure(method, params, site_url, urls)
                if failure and failure not in result.failures:  # a failed load may be retried
                    result.failures.append(failure)
        return result
    finally:
        dt.events.clear()
        try:
            dt.call("Target.closeTarget", {"targetId": target}, timeout=10)
        except Exception:  # noqa: BLE001 - the page's own failure (if any) is the one to report
            pass


def browser_check(site: Path, browser: str) -> list[PageResult]:
    """Open every page of `site` in headless `browser`; one PageResult per page.

    Parameters
    ----------
    site : Path
        The built site's folder.
    browser : str
        The Chromium executable (`find_browser`).

    Returns
    -------
    list of PageResult
        In the order of the pages' paths; a page on which the browser raised fails with that error.
    """
    site = Path(site).resolve()
    dt = DevTools(browser)
    results = []
    try:
        for page in sorted(site.rglob("*.html")):
            try:
                results.append(check_page(dt, page, site))
            except Exception as err:  # noqa: BLE001 - a browser that hangs or dies fails the page, not the run
                results.append(PageResult(str(page.relative_to(site)),
                                          failures=[f"the browser did not answer: {type(err).__name__}: {err}"]))
        return results
    finally:
        dt.close()


def main(site: Path, require_browser: bool = False) -> int:
    """The `check` command: static scan, then the browser check; prints a summary. Returns the exit code.

    Parameters
    ----------
    site : Path
        The built site's folder (holding index.html).
    require_browser : bool
        True: a missing Chromium fails the check (as it does when the environment variable CI is set).

    Returns
    -------
    int
        0 when every check passed (or only the browser check did not run, not required), else 1 (also when `site`
        holds no index.html).
    """
    site = Path(site)
    if not (site / "index.html").exists():
        print(f"site check: no site at {site}; run `python -m ancer_lite.tooling.site build` (make site) first", file=sys.stderr)
        return 1
    n_static, static = static_failures(site)
    print(f"site static check: {n_static} pages, {len(static)} failures")
    for f in static:
        print(f"  FAIL {f}")
    browser = find_browser()
    if browser is None:
        required = require_browser or bool(os.environ.get("CI"))
        print(NOT_RUN + (" (required here: CI is set)" if required and not require_browser else ""))
        return 1 if (static or required) else 0
    t0 = time.monotonic()
    results = browser_check(site, browser)
    failures = [(r.page, f) for r in results for f in r.failures]
    for page, f in failures:
        print(f"  FAIL {page}: {f}")
    print(f"site browser check ({Path(browser).name}, {time.monotonic() - t0:.1f} s): {len(results)} pages, "
          f"{sum(r.images for r in results)} images, {sum(r.math for r in results)} math elements checked, "
          f"{len(failures)} failures")
    return 1 if (static or failures) else 0
