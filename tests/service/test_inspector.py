"""The inspector page in headless Chromium: it loads, the token curve renders for a scripted session,
and clicking a request shows its snippets highlighted inside the source. A screenshot is kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
REPORT = "\n\n".join(f"Quarter {q}: revenue grew {q * 3}% in region {r}." for q in range(1, 5)
                     for r in ("north", "south", "east", "west", "central", "overseas"))


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    if not (CHROMIUM and DRIVER):
        pytest.skip("chromium and chromedriver are not installed (make test installs them where apt-get works)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1200,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
    yield driver
    driver.quit()


def test_inspector_plots_a_session_and_highlights_snippets(live_url: str, browser) -> None:  # type: ignore[no-untyped-def]
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    headers = {"X-Session-Id": "ui-demo"}
    first = httpx.post(f"{live_url}/v1/filter", json={"query": "overseas revenue", "content": REPORT, "k": 2},
                       headers=headers).json()
    httpx.post(f"{live_url}/v1/refs/{first['ref']}/filter", json={"query": "north", "k": 1}, headers=headers)
    httpx.post(f"{live_url}/v1/refs/{first['ref']}/filter", json={"query": "south", "k": 1}, headers=headers)

    browser.get(f"{live_url}/ui")
    wait = WebDriverWait(browser, 20)
    wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, '[data-session="ui-demo"]'))).click()
    chart = wait.until(ready.presence_of_element_located((By.ID, "token-chart")))
    points = chart.find_element(By.CSS_SELECTOR, "polyline.series-input_tokens").get_attribute("points")
    assert len(points.split()) == 3, "one point per request"
    assert "repeated" in browser.find_element(By.TAG_NAME, "table").text
    assert browser.find_element(By.ID, "warning").text.startswith("67%")
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "inspector-session.png"))
    browser.find_element(By.CSS_SELECTOR, 'tr.request[data-index="0"]').click()
    marks = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "pre.source mark"))
    shown = {m.text for m in marks}
    assert shown == {s["text"] for s in first["snippets"]}
    browser.save_screenshot(str(ARTIFACTS / "inspector-request.png"))
    assert (ARTIFACTS / "inspector-request.png").stat().st_size > 10_000
