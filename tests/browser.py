"""A real headless Chromium driven by WebDriver, to test pages as a person sees them.

Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs both): the
driver is named explicitly, so Selenium never tries to download one. Locally a
test that needs them skips with that reason; in CI (``CI=true``) it fails.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
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
