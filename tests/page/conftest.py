"""Fixtures for the page tests: one headless Chromium, pages at a width and
colour scheme, notangle's output, the woven fixture page.

  /usr/bin/python3 -m pytest tests/page [--page site/index.html]
      [--nw day74.nw] [--plots build/plots] [--shots build/page]

Chromium and chromedriver come from Debian (chromium, chromium-driver),
selenium from python3-selenium; CHROMIUM and CHROMEDRIVER name other
binaries.  Tests that need them skip, naming the package, when they are
missing.
"""

import os
import re
import shutil
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
NOWEB_LIB = os.environ.get("NOWEB_LIB", "/usr/lib/noweb")
WIDTHS = (375, 768, 1280)
HEIGHT = 900


def pytest_addoption(parser):
    g = parser.getgroup("page", "the lesson page")
    g.addoption("--page", default=os.path.join(ROOT, "site", "index.html"),
                help="the built page (default: site/index.html)")
    g.addoption("--nw", default=os.path.join(ROOT, "day74.nw"),
                help="the noweb source it was woven from (default: day74.nw)")
    g.addoption("--plots", default=os.path.join(ROOT, "build", "plots"),
                help="where make-plot wrote NAME.values.tsv (default: build/plots)")
    g.addoption("--shots", default=os.path.join(ROOT, "build", "page"),
                help="where screenshots go (default: build/page)")


# ---------------------------------------------------------------------------
# Paths and the source
# ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def page_path(request):
    path = os.path.abspath(request.config.getoption("--page"))
    if not os.path.isfile(path):
        pytest.fail("no page at %s: run make site first" % path)
    return path


@pytest.fixture(scope="session")
def nw_path(request):
    return os.path.abspath(request.config.getoption("--nw"))


@pytest.fixture(scope="session")
def plots_dir(request):
    return os.path.abspath(request.config.getoption("--plots"))


@pytest.fixture(scope="session")
def shots_dir(request):
    path = os.path.abspath(request.config.getoption("--shots"))
    os.makedirs(path, exist_ok=True)
    return path


def chunk_names(nw):
    """Names of the chunks defined in nw, from noweb's markup stage."""
    res = subprocess.run([os.path.join(NOWEB_LIB, "markup"), nw],
                         stdout=subprocess.PIPE, check=True)
    names = []
    for line in res.stdout.decode("utf-8").split("\n"):
        if line.startswith("@defn ") and line[6:] not in names:
            names.append(line[6:])
    return names


def notangle(nw, name):
    """What `notangle -R'name' nw` prints.

    Runs notangle's two stages (markup | nt) directly: the notangle script's
    eval cannot pass a name holding a single quote.
    """
    markup = subprocess.run([os.path.join(NOWEB_LIB, "markup"), nw],
                            stdout=subprocess.PIPE, check=True)
    res = subprocess.run([os.path.join(NOWEB_LIB, "nt"), "-R" + name],
                         input=markup.stdout, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, check=True)
    return res.stdout.decode("utf-8")


# ---------------------------------------------------------------------------
# The browser
# ---------------------------------------------------------------------------

def _which(cmd):
    return shutil.which(cmd) or cmd


@pytest.fixture(scope="session")
def driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium missing: apt-get install --no-install-recommends "
                    "python3-selenium")
    binary = _which(os.environ.get("CHROMIUM", "chromium"))
    drv_bin = _which(os.environ.get("CHROMEDRIVER", "chromedriver"))
    if not os.path.isfile(binary) or not os.path.isfile(drv_bin):
        pytest.skip("chromium or chromedriver missing: apt-get install "
                    "chromium chromium-driver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--hide-scrollbars",
                 "--window-size=1280,%d" % HEIGHT):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(drv_bin), options=opts)
    yield d
    d.quit()


class Browser:
    """One Chromium, pointed at pages at a width and colour scheme."""

    def __init__(self, driver):
        self.d = driver

    def open(self, path, width, scheme="light", media="screen"):
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": HEIGHT, "deviceScaleFactor": 1,
            "mobile": width < 600})
        self.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "media": media,
            "features": [{"name": "prefers-color-scheme", "value": scheme}]})
        self.d.get("about:blank")
        self.d.get("file://" + path)
        got = self.js("return window.innerWidth")
        assert got == width, "viewport is %s px, wanted %d" % (got, width)
        return self

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def console_errors(self):
        return [e.get("message", "") for e in self.d.get_log("browser")
                if e.get("level") == "SEVERE"]

    def shot(self, path, selector=None):
        if selector:
            self.js("const e = document.querySelector(arguments[0]);"
                    "if (e) e.scrollIntoView({block: 'start'});", selector)
        else:
            self.js("window.scrollTo(0, 0)")
        self.d.save_screenshot(path)
        return path


@pytest.fixture
def browser(driver):
    return Browser(driver)


# ---------------------------------------------------------------------------
# The fixture page (woven with the real tools, so page.lua and page.js run)
# ---------------------------------------------------------------------------

@pytest.fixture(scope="session")
def fixture_page():
    """(html path, nw path) of tests/page/fixtures/page-fixture.nw, woven."""
    nw = os.path.join(FIXTURES, "page-fixture.nw")
    facts = os.path.join(FIXTURES, "facts-empty.yaml")
    tmp = tempfile.mkdtemp(prefix="page-fixture-")
    out = os.path.join(tmp, "page.html")
    env = dict(os.environ, SITE_EXTRA_RESOURCES=os.path.join(FIXTURES, "plots"))
    res = subprocess.run([os.path.join(ROOT, "tools", "weave", "weave.sh"),
                          nw, facts, out], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if res.returncode != 0:
        pytest.fail("weave.sh failed on the fixture: %s"
                    % res.stderr.decode("utf-8", "replace")[-2000:])
    yield out, nw
    shutil.rmtree(tmp, ignore_errors=True)
