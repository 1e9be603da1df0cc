"""One live-web page in a browser tab, as the web agent sees and drives it (WebVoyager-style).

`observe()` numbers the visible interactive elements, draws each number in a box on the page,
takes the screenshot, removes the boxes again and returns the element list beside it (set-of-marks
prompting). `execute(action)` performs one action on the marked elements. Failures of the agent
(a number that is not on the page, typing into a link) come back as messages for the agent;
failures of the browser or the site (a page that does not load in time, a DNS error, a dead
chromedriver, an HTTP 5xx start page) raise `InfrastructureError`, which the harness retries and
then excludes.

After an action the page settles before it is observed again: a click that submits a form or
runs a script that navigates starts its navigation a little after the click returns, and an
observation taken in between shows the old page (the agent would then repeat its click). So
`execute` arms a marker on the document before the action and, after it, waits a short grace on
the page's own clock for a navigation to start; one that starts is followed until the new document
has loaded.

Navigation stays on the allowed hosts: a click that leaves them is undone with `back` and told
to the agent, so that a task cannot wander to another site and be judged on it.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Sequence
from urllib.parse import urlparse

from automemo.interaction.web import WebAction
from automemo.benchmarks.base import InfrastructureError

MARK = "data-automemo-mark"

# Numbers the visible interactive elements in the viewport, draws the boxes, and returns what
# the element list shows. Links lose `target` so that the page stays in this tab.
_MARK_JS = """
const MARK = arguments[0];
document.querySelectorAll('[data-automemo-overlay]').forEach(e => e.remove());
document.querySelectorAll('[' + MARK + ']').forEach(e => e.removeAttribute(MARK));
const selector = 'a[href], button, input, textarea, select, summary, [role=button], [role=link], ' +
                 '[role=tab], [role=checkbox], [role=menuitem], [onclick]';
const out = [];
for (const el of document.querySelectorAll(selector)) {
  if (el.type === 'hidden' || el.disabled) continue;
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) continue;
  if (r.bottom < 0 || r.right < 0 || r.top > innerHeight || r.left > innerWidth) continue;
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || style.display === 'none') continue;
  const n = out.length;
  el.setAttribute(MARK, String(n));
  if (el.tagName === 'A') el.removeAttribute('target');
  const typed = (el.tagName === 'INPUT' && !['submit', 'button', 'checkbox', 'radio'].includes(el.type)) || el.tagName === 'TEXTAREA';
  const label = (el.innerText || (typed ? '' : el.value) || el.getAttribute('aria-label') || el.getAttribute('title') || el.getAttribute('alt') || '');
  out.push({n: n, tag: el.tagName.toLowerCase(), type: el.getAttribute('type') || '',
            text: label.trim().replace(/\\s+/g, ' ').slice(0, 80),
            placeholder: el.getAttribute('placeholder') || '', value: typed ? el.value : '',
            checked: (el.type === 'checkbox' || el.type === 'radio') ? el.checked : null,
            x: Math.round(r.left), y: Math.round(r.top), w: Math.round(r.width), h: Math.round(r.height)});
  const box = document.createElement('div');
  box.setAttribute('data-automemo-overlay', '');
  box.style.cssText = `position:fixed;left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px;` +
                      'outline:2px solid #e3342f;pointer-events:none;z-index:2147483647';
  const tag = document.createElement('span');
  tag.textContent = String(n);
  tag.style.cssText = 'position:absolute;left:0;top:0;background:#e3342f;color:#fff;font:bold 11px sans-serif;padding:0 2px';
  box.appendChild(tag);
  document.documentElement.appendChild(box);
}
const nav = performance.getEntriesByType('navigation')[0];
return {url: location.href, title: document.title, elements: out,
        status: nav && nav.responseStatus ? nav.responseStatus : 0,
        text: document.body ? document.body.innerText : ''};
"""

# Before an action: tag this document and note when it starts to leave. `beforeunload` fires when
# a cross-document navigation begins, before its request is sent, and never for same-document
# ones (anchors, history.pushState), which leave the document in place.
_ARM_JS = """
window.__automemoToken = arguments[0];
window.__automemoLeaving = false;
if (!window.__automemoArmed) {  // one listener per document, however many actions it sees
  window.__automemoArmed = true;
  addEventListener('beforeunload', () => { window.__automemoLeaving = true; });
}
"""

# After an action: within `grace` seconds on the page's timers (which a busy renderer slows
# down together with the navigation it has queued), say whether the document is leaving. The
# script answers as soon as a navigation starts: one whose document unloads before it answers
# would hold chromedriver until the script timeout.
_GRACE_JS = """
const [token, grace] = arguments, done = arguments[arguments.length - 1];
if (window.__automemoToken !== token) { done('replaced'); return; }
if (window.__automemoLeaving) { done('leaving'); return; }
addEventListener('beforeunload', () => done('leaving'), {once: true});
setTimeout(() => done(window.__automemoLeaving ? 'leaving' : 'stayed'), grace * 1000);
"""

_LOADED_JS = "return [window.__automemoToken === arguments[0], document.readyState];"

_UNMARK_JS = "document.querySelectorAll('[data-automemo-overlay]').forEach(e => e.remove());"

_KEYS = {  # the action language's key names (interaction.web.KEYS values) -> selenium keys
    "<Enter>": "ENTER", "<Tab>": "TAB", "<Backspace>": "BACKSPACE", "<Escape>": "ESCAPE",
    "<Delete>": "DELETE", "<ArrowDown>": "ARROW_DOWN", "<ArrowUp>": "ARROW_UP", "<ArrowLeft>": "ARROW_LEFT",
    "<ArrowRight>": "ARROW_RIGHT", "<Home>": "HOME", "<End>": "END", "<PageDown>": "PAGE_DOWN", "<PageUp>": "PAGE_UP",
}


# Actions after which a page may navigate (a `wait` may let a slow one finish); a scroll never does.
_MAY_NAVIGATE = frozenset({"click", "type", "press", "back", "wait"})


@dataclass(frozen=True)
class LiveState:
    url: str
    title: str
    status: int          # HTTP status of the page's navigation (0 when the browser does not say)
    elements: str        # the element list, one `[N] tag "text" ...` per line
    text: str            # the page's visible text, cut to the configured length
    screenshot: bytes    # PNG with the numbered boxes
    refs: frozenset[int]

    def observation(self) -> str:
        """What the agent reads beside the screenshot."""
        status = f" (HTTP {self.status})" if self.status >= 400 else ""
        return (f"URL: {self.url}{status}\nTitle: {self.title}\n\nElements:\n{self.elements or '(none visible)'}"
                f"\n\nPage text:\n{self.text}")


def host_of(url: str) -> str:
    return (urlparse(url).hostname or "").lower().removeprefix("www.")


def host_allowed(url: str, allowed: Sequence[str]) -> bool:
    """`url`'s host is one of `allowed` or a subdomain of one; non-web URLs (about:, data:) pass."""
    if urlparse(url).scheme not in ("http", "https"):
        return True
    host = host_of(url)
    return any(host == a or host.endswith("." + a) for a in allowed)


def _element_line(e: dict[str, Any]) -> str:
    parts = [f"[{e['n']}]", e["tag"] + (f" type={e['type']}" if e["type"] and e["tag"] in ("input", "button") else "")]
    if e["text"]:
        parts.append(json.dumps(e["text"], ensure_ascii=False))
    if e["placeholder"]:
        parts.append(f"placeholder={json.dumps(e['placeholder'][:60], ensure_ascii=False)}")
    if e["value"]:
        parts.append(f"value={json.dumps(e['value'][:80], ensure_ascii=False)}")
    if e["checked"] is not None:
        parts.append("checked" if e["checked"] else "unchecked")
    parts.append(f"at ({e['x']},{e['y']} {e['w']}x{e['h']})")
    return " ".join(parts)


class LivePage:
    def __init__(self, driver: Any, allowed_hosts: Sequence[str], *, wait_s: float = 2.0, max_text_chars: int = 2000,
                 settle_s: float = 0.3, load_timeout_s: float = 30.0) -> None:
        self.driver = driver
        self.allowed_hosts = tuple(allowed_hosts)  # empty: any host
        self.wait_s = wait_s
        self.max_text_chars = max_text_chars
        self.settle_s = settle_s
        self.load_timeout_s = load_timeout_s

    def open(self, url: str) -> None:
        """Load the task's start page. A load failure or an HTTP 5xx answer is the site's or the
        network's fault, not the agent's: InfrastructureError. The browser's previous document is
        retired first (about:blank): a navigation it had scheduled (a late form or script) would
        otherwise race this load and could leave the task on the last task's page."""
        self.driver.get("about:blank")
        self.driver.get(url)
        status = self.driver.execute_script(
            "const n = performance.getEntriesByType('navigation')[0]; return n ? n.responseStatus : 0;")
        if int(status or 0) >= 500:
            raise InfrastructureError(f"start page {url} answered HTTP {status}")

    def observe(self) -> LiveState:
        info = self.driver.execute_script(_MARK_JS, MARK)
        png = self.driver.get_screenshot_as_png()
        self.driver.execute_script(_UNMARK_JS)
        lines = [_element_line(e) for e in info["elements"]]
        text = " ".join(str(info.get("text") or "").split())[: self.max_text_chars]
        return LiveState(str(info["url"]), str(info["title"]), int(info.get("status") or 0), "\n".join(lines), text,
                         png, frozenset(int(e["n"]) for e in info["elements"]))

    def execute(self, action: WebAction, refs: frozenset[int]) -> str | None:
        """Perform `action`; return a message for the agent when it could not be done."""
        from selenium.common.exceptions import (ElementNotInteractableException, InvalidElementStateException,
                                                NoSuchElementException, StaleElementReferenceException)

        token = secrets.token_hex(8)
        settles = action.kind in _MAY_NAVIGATE
        if settles:
            self.driver.execute_script(_ARM_JS, token)
        try:
            error = self._execute(action, refs)
            if settles and error is None:
                self._settle(token)
        except (NoSuchElementException, StaleElementReferenceException):
            return f"element [{action.ref}] is gone: the page changed; use a number from the current list"
        except (ElementNotInteractableException, InvalidElementStateException) as exc:
            return f"element [{action.ref}] cannot be used that way ({exc.msg.splitlines()[0] if exc.msg else 'not interactable'})"
        if error is None and self.allowed_hosts and not host_allowed(self.driver.current_url, self.allowed_hosts):
            left = self.driver.current_url
            self.driver.back()
            return (f"that led to {left}, outside the sites this task may use ({', '.join(self.allowed_hosts)}); "
                    "went back")
        return error

    def _settle(self, token: str) -> None:
        """Return once the page is where the action left it: either no navigation started within
        the grace, or the one that started has replaced the document and finished loading. A
        navigation that starts but never replaces the document (an HTTP 204, a download) is given
        up after the load timeout; a load that chromium itself times out raises, as any other."""
        from selenium.common.exceptions import JavascriptException

        try:
            if self.driver.execute_async_script(_GRACE_JS, token, self.settle_s) == "stayed":
                return
        except JavascriptException:  # the document unloaded while the script waited: it navigated
            pass
        deadline = time.monotonic() + self.load_timeout_s
        while time.monotonic() < deadline:
            try:
                same, ready = self.driver.execute_script(_LOADED_JS, token)
            except JavascriptException:  # between two documents
                same, ready = True, "loading"
            if not same and ready == "complete":
                return
            time.sleep(0.05)

    def _execute(self, action: WebAction, refs: frozenset[int]) -> str | None:
        from selenium.common.exceptions import ElementClickInterceptedException
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        if action.kind in ("click", "type"):
            if action.ref not in refs:
                return f"there is no element [{action.ref}] on the page; use a number from the element list"
            element = self.driver.find_element(By.CSS_SELECTOR, f'[{MARK}="{int(action.ref)}"]')
            if action.kind == "click":
                try:
                    element.click()
                except ElementClickInterceptedException:  # covered by a banner: click it the page's way
                    self.driver.execute_script("arguments[0].click();", element)
                return None
            if element.tag_name.lower() not in ("input", "textarea") and element.get_attribute("contenteditable") != "true":
                return f"element [{action.ref}] is a {element.tag_name.lower()}, not a text field; type into an input"
            element.clear()
            element.send_keys(action.text)
            return None
        if action.kind == "press":
            key = getattr(Keys, _KEYS[action.text]) if action.text in _KEYS else action.text
            self.driver.switch_to.active_element.send_keys(key)
            return None
        if action.kind == "scroll":
            sign = 1 if action.text == "down" else -1
            self.driver.execute_script(f"window.scrollBy(0, {sign} * window.innerHeight * 2 / 3);")
            return None
        if action.kind == "wait":
            time.sleep(self.wait_s)
            return None
        if action.kind == "back":
            self.driver.back()
            return None
        return f"`{action.kind}` cannot be performed on a page"
