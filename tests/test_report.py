"""The HTML report (--report): its content, that it is self-contained, and that it renders in a
real headless browser (Debian's chromium through selenium; skipped, saying so, without one)."""
from __future__ import annotations

import json
import os
import re
import shutil
from html.parser import HTMLParser

import pytest

import naiveopt
from conftest import KERNELS_DIR, run_cli
from test_batch import BROKEN, gpu_results

MV_CU = os.path.join(KERNELS_DIR, "mv.cu")
VV_CU = os.path.join(KERNELS_DIR, "vv.cu")


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """mv and vv (profiled at small sizes, with GPU timings from a bench/run.py-style file)
    and a broken file, reported."""
    tmp = tmp_path_factory.mktemp("report")
    broken = tmp / "broken.cu"
    broken.write_text(BROKEN)
    passes = {}
    for path in (MV_CU, VV_CU):
        with open(path, encoding="utf-8") as fh:
            (kernel,) = naiveopt.optimize(fh.read(), filename=path, verify=False).kernels
        passes[kernel.name] = kernel.passes
    gpu = gpu_results(tmp / "gpu.json", passes)
    report = tmp / "report.html"
    done = run_cli(MV_CU, VV_CU, broken, "-o", tmp / "OUT", "--profile", "-D", "H=128",
                   "-D", "W=96", "--bench-results", gpu, "--report", report, "--json")
    assert done.returncode == 1, done.stderr
    return report, json.loads(done.stdout)


class Page(HTMLParser):
    """The tags and attributes of a page, and the text of its span and td elements by class."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.classes: dict[str, list[str]] = {}
        self._open: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag in ("span", "td"):
            self._open.append(attrs.get("class") or "")
            self.classes.setdefault(self._open[-1], []).append("")

    def handle_endtag(self, tag):
        if tag in ("span", "td"):
            self._open.pop()

    def handle_data(self, data):
        if self._open:
            self.classes[self._open[-1]][-1] += data


def test_report_content(batch):
    report, summary = batch
    text = report.read_text()
    page = Page(text)
    names = [t for t, _ in page.tags]
    # self-contained: no scripts, stylesheets, images or anything fetched
    assert not {"script", "link", "img", "iframe", "object"} & set(names)
    assert not [a for _, a in page.tags if "src" in a or not a.get("href", "#").startswith("#")]
    assert not re.search(r"url\((?!#)", text) and "@import" not in text
    assert names.count("svg") == 3                # sectors, estimated times, GPU speedups
    assert 'id="sectors-plot"' in text and 'id="speedup-plot"' in text
    assert 'id="estimate-plot"' in text
    # the cost model's estimates in the table: naive -> optimized, each with its bound
    assert re.search(r"[\d.]+ us \w+ -&gt; [\d.]+ us \w+ \([\d.]+x\)", text)
    # the summary table: one row per kernel, one for the broken file
    assert text.count('<td class="passed"') == 2 and text.count('<td class="ERROR"') == 1
    mv = summary["files"][0]["kernels"][0]
    assert f"{mv['sectors']['naive']:,} -&gt; {mv['sectors']['optimized']:,}" in text
    assert "4.00x (NVIDIA H100)" in text
    assert "broken.cu:3:12: error: expected expression" in text
    # remarks per kernel, and mv's diff: the naive loop removed, the tiled loop added
    # (mv at 128 rows is split over lanes: split-reduction, its estimate in the remark)
    assert "applied" in page.classes["applied"] and "split-reduction" in page.classes["pass"]
    assert any("threads per output, partial sums added in shared memory" in m
               for m in page.classes["message"])
    deleted, added = page.classes["del"], page.classes["add"]
    assert any("sum += A[i * W + j] * B[j];" in line for line in deleted)
    assert any("__shared__" in line for line in added)
    assert page.classes["head"][:2] == [f"--- {MV_CU}", f"+++ {summary['files'][0]['output']}"]


def _browser() -> tuple[str, str]:
    pytest.importorskip("selenium", reason="selenium not installed: the report is not "
                        "rendered in a browser")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no headless browser (apt-get install chromium chromium-driver): the "
                    "report is not rendered in a browser")
    return chromium, driver


def test_report_renders_in_a_browser(batch, tmp_path):
    chromium, driver_path = _browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    report, _ = batch
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1600",
                "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get(report.as_uri())
        rows = driver.find_elements(By.CSS_SELECTOR, "#summary tbody tr")
        assert len(rows) == 3
        for row in rows:
            assert row.is_displayed() and row.size["height"] > 5 and row.size["width"] > 300
        assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows] == ["mv", "vv", "-"]
        for plot, labels in (("sectors-plot", ["mv.cu: mv", "vv.cu: vv"]),
                             ("speedup-plot", ["mv.cu: mv (NVIDIA H100)"])):
            svg = driver.find_element(By.CSS_SELECTOR, f"#{plot} svg")
            assert svg.is_displayed()
            assert svg.size["width"] > 300 and svg.size["height"] > 100, (plot, svg.size)
            # the bars are drawn: painted paths with a real extent inside the plot
            bars = driver.execute_script(
                "return Array.from(arguments[0].querySelectorAll('g[id^=patch] path'))"
                ".map(p => p.getBoundingClientRect()).filter(r => r.width > 1 && r.height > 1)"
                ".length", svg)
            assert bars >= len(labels), (plot, bars)
            texts = [t.text for t in svg.find_elements(By.TAG_NAME, "text")]
            for label in labels:
                assert label in texts, (plot, texts)
    finally:
        driver.quit()
