"""Tools an environment offers the visual agent (AgentVista, MMSearch-Plus protocols): `web_search` behind one
provider interface (a SearXNG instance's JSON API, Serper, Brave) and `visit` (fetch a page,
extract its main text, summarise it for the agent's goal with `prompts/visit_summary.j2`).

Offered to the model through OpenAI tool calling (`TOOL_SPECS`). A failed search or fetch is
told to the agent as the tool's result (it may try another query or page); a provider that is
misconfigured (unknown name, key variable empty) fails when the benchmark is built.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from automemo.errors import HostError
from automemo.llm.messages import user_message
from automemo.prompting import render


@dataclass(frozen=True)
class ToolsConfig:
    provider: str = ""            # "" = no tools; "searxng" | "serper" | "brave"
    url: str = ""                 # the provider's endpoint; "" = its public API (SearXNG: your instance, required)
    api_key_env: str = ""         # variable holding the key; "" = SERPER_API_KEY / BRAVE_API_KEY (SearXNG needs none)
    max_calls: int = 10           # tool calls per episode; past it the agent is told to answer
    max_results: int = 5          # search results shown per call
    visit_max_chars: int = 20000  # page text handed to the visit-summary prompt
    timeout_s: float = 20.0       # per HTTP request of a search or a visit


PROVIDERS = {  # name -> (default endpoint, default key variable)
    "searxng": ("", ""),
    "serper": ("https://google.serper.dev/search", "SERPER_API_KEY"),
    "brave": ("https://api.search.brave.com/res/v1/web/search", "BRAVE_API_KEY"),
}

TOOL_SPECS = (
    {"type": "function", "function": {
        "name": "web_search",
        "description": "Search the web. Returns the top results: title, URL and snippet.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "the search query"}},
                       "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "visit",
        "description": "Open a web page and get a summary of what it says about your goal (an image URL returns the image).",
        "parameters": {"type": "object", "properties": {
            "url": {"type": "string", "description": "the page's URL"},
            "goal": {"type": "string", "description": "what you are looking for on the page"}},
            "required": ["url"]}}},
)


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str


@dataclass(frozen=True)
class ToolOutput:
    text: str                   # what the tool message says
    image: bytes | None = None  # an image the tool fetched (shown to the model if the image limit allows)


class SearchError(HostError, RuntimeError):
    """A search provider did not answer usably; the message says what it answered."""


def _http(url: str, *, headers: dict[str, str], timeout: float, body: bytes | None = None) -> tuple[bytes, str]:
    request = urllib.request.Request(url, data=body, headers={"User-Agent": "automemo", **headers})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read(), response.headers.get("Content-Type", "")


class SearchProvider:
    """One web search API. `search(query, n)` returns at most n results."""

    def __init__(self, config: ToolsConfig) -> None:
        default_url, default_key = PROVIDERS[config.provider]
        self.config = config
        self.url = config.url or default_url
        self.key_env = config.api_key_env or default_key
        if not self.url:
            raise ValueError(f"search provider {config.provider!r} needs `url`: the address of your instance")
        self.key = os.environ.get(self.key_env, "") if self.key_env else ""
        if self.key_env and not self.key:
            raise ValueError(f"search provider {config.provider!r} reads its key from ${self.key_env}, which is empty: export it")

    def search(self, query: str, n: int) -> list[SearchResult]:
        try:
            data = json.loads(self._fetch(query)[0])
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise SearchError(f"{self.config.provider} did not answer: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise SearchError(f"{self.config.provider} answered something that is not JSON ({exc.msg})") from exc
        return self._results(data)[:n]

    def _fetch(self, query: str) -> tuple[bytes, str]:
        raise NotImplementedError

    def _results(self, data: Any) -> list[SearchResult]:
        raise NotImplementedError


class SearxngSearch(SearchProvider):
    """A SearXNG instance's JSON API: GET /search?q=..&format=json (the instance must enable the json format)."""

    def _fetch(self, query):
        url = self.url.rstrip("/")
        url = url if url.endswith("/search") else url + "/search"
        return _http(f"{url}?{urllib.parse.urlencode({'q': query, 'format': 'json'})}", headers={}, timeout=self.config.timeout_s)

    def _results(self, data):
        return [SearchResult(str(r.get("title", "")), str(r.get("url", "")), str(r.get("content", "")))
                for r in data.get("results", []) if isinstance(r, dict)]


class SerperSearch(SearchProvider):
    def _fetch(self, query):
        return _http(self.url, headers={"X-API-KEY": self.key, "Content-Type": "application/json"},
                     timeout=self.config.timeout_s, body=json.dumps({"q": query}).encode())

    def _results(self, data):
        return [SearchResult(str(r.get("title", "")), str(r.get("link", "")), str(r.get("snippet", "")))
                for r in data.get("organic", []) if isinstance(r, dict)]


class BraveSearch(SearchProvider):
    def _fetch(self, query):
        return _http(f"{self.url}?{urllib.parse.urlencode({'q': query})}",
                     headers={"X-Subscription-Token": self.key, "Accept": "application/json"}, timeout=self.config.timeout_s)

    def _results(self, data):
        web = data.get("web") or {}
        return [SearchResult(str(r.get("title", "")), str(r.get("url", "")), str(r.get("description", "")))
                for r in web.get("results", []) if isinstance(r, dict)]


def search_provider(config: ToolsConfig) -> SearchProvider:
    classes = {"searxng": SearxngSearch, "serper": SerperSearch, "brave": BraveSearch}
    if config.provider not in classes:
        raise ValueError(f"unknown search provider {config.provider!r}; use one of {', '.join(sorted(classes))}")
    return classes[config.provider](config)


class _MainText(HTMLParser):
    """Visible text of a page without scripts, styles and navigation chrome."""

    SKIP = {"script", "style", "noscript", "nav", "header", "footer", "aside", "svg", "form", "template"}

    def __init__(self) -> None:
        super().__init__()
        self.skipping = 0
        self.title = ""
        self.in_title = False
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skipping += 1
        self.in_title = tag == "title"

    def handle_endtag(self, tag):
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        self.in_title = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data.strip()
        elif not self.skipping and data.strip():
            self.parts.append(" ".join(data.split()))


def main_text(html: str) -> tuple[str, str]:
    """(title, main text) of an HTML page."""
    parser = _MainText()
    parser.feed(html)
    return parser.title, "\n".join(parser.parts)


class WebTools:
    """The tools one run offers; shared by all episodes (it holds no per-episode state)."""

    def __init__(self, config: ToolsConfig, llm: Any) -> None:
        if config.max_calls < 1:
            raise ValueError(f"tools.max_calls must be at least 1, got {config.max_calls}")
        self.config = config
        self.provider = search_provider(config)
        self.llm = llm

    specs = TOOL_SPECS

    def describe(self) -> str:
        return f"web_search ({self.config.provider}) and visit, at most {self.config.max_calls} calls per episode"

    def run(self, name: str, arguments: str, *, node: Any = None) -> ToolOutput:
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            return ToolOutput(f"the arguments of {name} are not JSON: {arguments[:200]}")
        if not isinstance(args, dict):
            return ToolOutput(f"the arguments of {name} must be a JSON object")
        if name == "web_search":
            return self.web_search(str(args.get("query") or ""))
        if name == "visit":
            return self.visit(str(args.get("url") or ""), str(args.get("goal") or ""), node=node)
        return ToolOutput(f"there is no tool {name!r}; the tools are web_search and visit")

    def web_search(self, query: str) -> ToolOutput:
        if not query.strip():
            return ToolOutput("web_search needs a non-empty `query`")
        try:
            results = self.provider.search(query, self.config.max_results)
        except SearchError as exc:
            return ToolOutput(f"search failed: {exc}")
        if not results:
            return ToolOutput(f"no results for {query!r}")
        return ToolOutput("\n\n".join(f"{i}. {r.title}\n{r.url}\n{r.snippet}" for i, r in enumerate(results, 1)))

    def visit(self, url: str, goal: str, *, node: Any = None) -> ToolOutput:
        if urllib.parse.urlparse(url).scheme not in ("http", "https"):
            return ToolOutput(f"visit needs an http(s) URL, got {url!r}")
        try:
            body, kind = _http(url, headers={}, timeout=self.config.timeout_s)
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            return ToolOutput(f"could not open {url}: {exc}")
        if kind.startswith("image/"):
            return ToolOutput(f"{url} is an image ({kind})", image=body)
        title, text = main_text(body.decode("utf-8", errors="replace"))
        if not text:
            return ToolOutput(f"{url} has no readable text")
        limit = self.config.visit_max_chars
        prompt = render("visit_summary", goal=goal, url=url, title=title, text=text[:limit],
                        truncated=len(text) > limit, max_chars=limit)
        summary = self.llm.chat("agent", [user_message(prompt)], node=node, purpose="visit-summary", max_tokens=512)
        return ToolOutput(f"{url}{f' ({title})' if title else ''}:\n{summary.text.strip()}")
