"""A live page settles after an action before it is observed again (real chromium against the
shop site of tests/livesite.py): a form submission or a script that navigates ~150 ms after the
click returned is followed to its new page, a click that does not navigate is observed in place
within about the grace, and a navigation to a host the task may not use is still undone."""

from __future__ import annotations

import time

import pytest

from automemo.benchmarks.browser import BrowserConfig, BrowserPool
from automemo.benchmarks.live_page import LivePage
from automemo.interaction.web import WebAction

from livesite import site  # noqa: F401 (site: the shop, a fixture)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def driver():
    pool = BrowserPool(BrowserConfig(window_width=1024, window_height=768))
    try:
        yield pool.driver()
    finally:
        pool.close()


def _ref(state, text: str) -> int:
    line = next(line for line in state.elements.splitlines() if text in line)
    return int(line[1:line.index("]")])


def test_a_form_submitted_late_is_observed_on_its_results_page(site, driver):
    page = LivePage(driver, ["127.0.0.1"])
    page.open(site.url("/late"))
    state = page.observe()
    assert page.execute(WebAction("type", _ref(state, "input"), "Blue"), state.refs) is None
    state = page.observe()
    assert page.execute(WebAction("click", _ref(state, 'button type=submit "Search"')), state.refs) is None
    state = page.observe()
    assert state.url.endswith("/search?q=Blue") and state.title == "Results for blue"
    assert 'a "Blue Widget"' in state.elements


def test_a_script_that_navigates_late_is_followed_and_a_click_that_stays_is_not_waited_on(site, driver):
    page = LivePage(driver, ["127.0.0.1"])
    page.open(site.url("/late"))
    state = page.observe()
    started = time.monotonic()
    assert page.execute(WebAction("click", _ref(state, '"Stay"')), state.refs) is None
    stayed_s = time.monotonic() - started
    state = page.observe()
    assert state.url.endswith("/late") and '"Pressed"' in state.elements
    assert stayed_s < 5  # the grace (0.3 s of page time), not the 30 s load timeout
    assert page.execute(WebAction("click", _ref(state, '"About"')), state.refs) is None
    assert page.observe().title == "About"


def test_without_a_grace_the_late_submission_is_observed_on_the_old_page(site, driver):
    """What the grace is for: with none, the observation races the submission and loses."""
    page = LivePage(driver, ["127.0.0.1"], settle_s=0)
    page.open(site.url("/late"))
    state = page.observe()
    page.execute(WebAction("type", _ref(state, "input"), "Blue"), state.refs)
    state = page.observe()
    page.execute(WebAction("click", _ref(state, 'button type=submit "Search"')), state.refs)
    assert page.observe().url.endswith("/late")


def test_a_late_navigation_off_the_allowed_hosts_is_undone(site, driver):
    page = LivePage(driver, ["localhost"])  # the shop's own 127.0.0.1 is not allowed here
    page.open(site.url("/late"))
    state = page.observe()
    error = page.execute(WebAction("click", _ref(state, '"About"')), state.refs)
    assert error and "outside the sites this task may use" in error
