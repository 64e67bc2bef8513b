"""Shared fixtures: real pipeline, real files, real stores (no mocks)."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def built(tmp_path_factory, sample_kg) -> Path:
    """An output folder written by a real build of the samples."""
    out = tmp_path_factory.mktemp("build") / "outputs"
    sample_kg.save(out, rdf=("nt", "ttl", "jsonld"))
    return out


def rdf_text(path: Path) -> str:
    """The text of a gzip-compressed RDF file of a build."""
    import gzip

    return gzip.decompress(path.read_bytes()).decode("utf-8")


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path

# -- the browser: Debian's Chromium through Playwright --------------------------------------

def _chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and os.environ.get("CI"):
        pytest.fail("CI must install Debian's chromium (see .ci/run)")
    if path is None:
        pytest.skip("chromium is not installed on this machine")
    pw = pytest.importorskip("playwright.sync_api")
    return path, pw


ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium (skipped where none is installed, a failure in CI)."""
    exe, pw = _chromium()
    p = pw.sync_playwright().start()
    b = p.chromium.launch(executable_path=exe, args=ARGS)
    yield b
    b.close()
    p.stop()


def open_page(browser, url):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log = {"requests": [], "errors": []}
    page.on("request", lambda r: log["requests"].append(r.url))
    page.on("pageerror", lambda e: log["errors"].append(str(e)))
    page.on("console", lambda m: log["errors"].append(m.text) if m.type == "error" else None)
    page.on("dialog", lambda d: (log["errors"].append("dialog: " + d.message), d.dismiss()))
    page.route(re.compile(r"^(?!file:|data:|blob:).*"), lambda route: route.abort())
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=30000)
    return page, log


def node_point(page, node_id):
    """Where a node is drawn on the page (DOM coordinates)."""
    return page.evaluate("""id => {
        const v = window.kgView, p = v.network.getPositions([id])[id], d = v.network.canvasToDOM(p);
        const r = document.getElementById("graph").getBoundingClientRect();
        return [r.left + d.x, r.top + d.y]; }""", node_id)


def non_local(log):
    return [u for u in log["requests"] if not u.startswith(("file:", "data:", "blob:"))]
