"""A real headless Chromium driven by WebDriver, to test pages as a person sees them.

Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs both): the
driver is named explicitly, so Selenium never tries to download one. Locally a
test that needs them skips with that reason; in CI (``CI=true``) it fails.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from system import require

DRIVER = "/usr/bin/chromedriver"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    require("chromium", "chromedriver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # the console, for console()
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def viewport(driver: Any, width: int, height: int) -> None:
    """Make the page's viewport (not the window) this size, as a phone's would be."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def console(driver: Any) -> list[str]:
    """What the page wrote to the console (warnings, errors, CSP violations) since the last call."""
    return [f"{entry['level']} {entry['message']}" for entry in driver.get_log("browser")]


def rgba(hex_colour: str) -> str:
    """How a browser reports a colour: ``#cf222e`` is ``rgba(207, 34, 46, 1)``."""
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, 1)"


def open_pasted(driver: Any, folder: Path, html: str) -> None:
    """Open ``html`` as a rich-text editor holds what was pasted: a bare page, no <style>, no classes defined."""
    page = folder / "pasted.html"
    page.write_text(f"<!DOCTYPE html><meta charset=utf-8><body>{html}</body>", encoding="utf-8")
    viewport(driver, 900, 600)
    driver.get(page.as_uri())


def assert_framed_and_coloured(driver: Any, keyword: str) -> None:
    """The pasted code's ``keyword`` has the keyword colour and its ``pre`` the frame of a code block, monospace:
    the highlighting travelled inline, with no stylesheet on the page."""
    from vis_export.formats.highlight import TOKEN_COLOURS

    word = driver.find_element("xpath", f"//pre//span[text()='{keyword}']")
    assert word.value_of_css_property("color") == rgba(TOKEN_COLOURS["k"])
    pre = driver.find_element("css selector", "pre")
    assert pre.value_of_css_property("background-color") == rgba("#f6f8fa")
    assert "monospace" in pre.value_of_css_property("font-family")
