"""AgentVista / MMSearch-Plus with their protocols' tools: `web_search` (here a SearXNG-style JSON
API served by tests/livesite.py) and `visit` (fetch, main text, visit-summary prompt), offered
through OpenAI tool calling by the fake server's scripted agent. The evidence's trajectory shows
every call; the per-episode call limit and the image limit hold; without a provider the run says
it has no tools."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from automemo.agents.tool_agent import ToolUsingAgent
from automemo.agents.visual import VisualAgentConfig
from automemo.benchmarks import load
from automemo.contract import PartialRecorder
from automemo.episode_store import EpisodeStore
from automemo.interaction.tools import ToolsConfig, WebTools, search_provider
from automemo.llm import LLMClient, LLMConfig, RoleConfig
from automemo.measurements.stand_ins.fakellm import FakeLLM
from automemo.paths import seed_path

from livesite import LiveSite, site  # noqa: F401 (site: the shop, a fixture)

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"


def researcher(site: LiveSite):
    """Searches, visits the first result, looks at a photo, then answers with the price it read."""
    def reply(request: dict):
        if "tools" not in request:  # the visit summary, or the final round after the call limit
            text = request["messages"][-1]["content"]
            text = text if isinstance(text, str) else " ".join(p.get("text", "") for p in text)
            if "You read a web page for a research agent" in text:
                price = re.search(r"Price: (\$[\d.]+)", text)
                return f"The page gives the price {price.group(1)}." if price else "Nothing relevant."
            return "Out of tool calls.\nAnswer: unknown"
        results = [m for m in request["messages"] if m["role"] == "tool"]
        if not results:
            return {"tool_calls": [{"name": "web_search", "arguments": {"query": "blue widget price"}}]}
        if len(results) == 1:
            url = re.search(r"(http://\S+/item/\d+)", results[0]["content"]).group(1)
            return {"tool_calls": [{"name": "visit", "arguments": {"url": url, "goal": "the price"}}]}
        if len(results) == 2:
            return {"tool_calls": [{"name": "visit", "arguments": {"url": site.url("/photo.png"), "goal": "the colour"}}]}
        price = re.search(r"price (\$\d+\.\d\d)", results[1]["content"]).group(1)
        return f"The shop page says {price}.\nAnswer: {price}"
    return reply


def test_agentvista_eval_calls_web_search_and_visit_and_the_evidence_shows_them(site, tmp_path):
    home = tmp_path / "user"
    (home / "seeds").mkdir(parents=True)
    shutil.copy(seed_path("no_memory"), home / "seeds" / "no_memory.py")
    tasks = home / "agentvista.json"
    shutil.copy(FIXTURES / "av_img1.png", home / "av_img1.png")
    tasks.write_text(json.dumps([{"question_id": "q1", "problem": "What does the blue widget in the picture cost?",
                                  "images": ["av_img1.png"], "solution": "$19.99", "category": "Commerce"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AUTOMEMO_"))}
    env.update(AUTOMEMO_CACHE=str(home / "cache"), OPENAI_API_KEY="sk-local-placeholder")
    tools = json.dumps({"provider": "searxng", "url": site.url("/searx"), "max_calls": 5})
    with FakeLLM() as server:
        server.set_handler(researcher(site))
        run = subprocess.run(
            ["automemo", "eval", "seeds/no_memory.py", "--benchmark", "agentvista", "--agent-model", "m",
             "--agent-base-url", server.base_url, "--repeats", "1", "--option", "path=agentvista.json",
             "--option", "test_fraction=1", "--option", f"tools={tools}"],
            cwd=home, env=env, capture_output=True, text=True, timeout=300)
        offered = [r for r in server.requests if "tools" in r]
    assert run.returncode == 0, run.stderr
    assert "runs without tools" not in run.stderr
    doc = json.loads((home / re.search(r"results written to (\S+);", run.stdout).group(1)).read_text())
    assert doc["table"]["score"]["mean"] == 1.0
    assert doc["benchmark"]["tools"] == "web_search (searxng) and visit, at most 5 calls per episode"
    assert {t["function"]["name"] for t in offered[0]["tools"]} == {"web_search", "visit"}

    episode = json.loads((home / doc["evaluations"][0]["evidence_dir"] / "tasks" / "q1" / "episode.json").read_text())
    actions = [s["action"] for s in episode["steps"]]
    assert actions[0] == 'web_search {"query": "blue widget price"}'
    assert actions[1].startswith('visit {"url": "http://127.0.0.1:') and "/item/1" in actions[1]
    assert actions[2].startswith("visit ") and "/photo.png" in actions[2]
    assert actions[3] == "answer $19.99"
    assert "Blue Widget" in episode["steps"][0]["observation"]                       # the search results
    assert "The page gives the price $19.99." in episode["steps"][1]["observation"]  # the visit summary
    assert episode["steps"][2]["screenshot"] is not None                              # the fetched photo, shown
    assert "/searx/search" in site.hits and "/item/1" in site.hits


def _agent(server, site, **config):
    role = RoleConfig(model="m", base_url=server.base_url, max_retries=0)
    llm = LLMClient(LLMConfig(agent=role))
    tools = WebTools(ToolsConfig(provider="searxng", url=site.url("/searx"), **config), llm)
    return ToolUsingAgent(llm, tools, VisualAgentConfig(max_images_in_context=1))


def test_the_call_limit_withdraws_the_tools_and_images_past_the_limit_are_not_shown(site, tmp_path):
    store = EpisodeStore(tmp_path)
    question = PartialRecorder("q", "agentvista", "What colour?", (store.put_image(FIXTURES / "av_img1.png"),))
    with FakeLLM() as server:
        server.set_handler(researcher(site))
        answer = _agent(server, site, max_calls=2).answer(question, None, store)
    assert [s.action.split()[0] for s in answer.steps] == ["web_search", "visit", "answer"]
    assert answer.text == "unknown" and answer.usage["tool_calls"] == 2
    assert "tools" not in server.requests[-1]  # the third round offered no tools

    with FakeLLM() as server:
        server.set_handler(researcher(site))
        answer = _agent(server, site, max_calls=5).answer(question, None, store)
    photo = answer.steps[2]
    assert "not shown: the limit of 1 images is reached" in photo.observation and photo.screenshot is None
    assert answer.text == "$19.99"


def test_without_a_provider_the_run_says_it_has_no_tools_and_providers_need_their_key(monkeypatch):
    bench = load("mmsearch_plus", {"path": str(FIXTURES / "mmsearch_plus_sample.jsonl")})
    assert bench.agent_tools is None and "runs without tools" in bench.describe()["notice"]
    monkeypatch.delenv("SERPER_API_KEY", raising=False)
    with pytest.raises(ValueError, match=r"\$SERPER_API_KEY, which is empty"):
        search_provider(ToolsConfig(provider="serper"))
    with pytest.raises(ValueError, match="unknown search provider 'google'"):
        search_provider(ToolsConfig(provider="google"))
    with pytest.raises(ValueError, match="needs `url`"):
        search_provider(ToolsConfig(provider="searxng"))


class _ProviderAPI:
    """Serper's and Brave's answers, given only with the right key header."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, ok: bool, body: dict):
                data = json.dumps(body if ok else {"message": "Unauthorized"}).encode()
                self.send_response(200 if ok else 401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):  # Serper: POST {"q": ...} with X-API-KEY
                query = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["q"]
                self._answer(self.headers.get("X-API-KEY") == "serper-key",
                             {"organic": [{"title": f"Serper on {query}", "link": "https://a.example/", "snippet": "s"}]})

            def do_GET(self):  # Brave: GET ?q=... with X-Subscription-Token
                self._answer(self.headers.get("X-Subscription-Token") == "brave-key",
                             {"web": {"results": [{"title": "Brave result", "url": "https://b.example/", "description": "d"}]}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"


def test_serper_and_brave_answers_read_through_the_same_interface(monkeypatch):
    api = _ProviderAPI()
    try:
        monkeypatch.setenv("SERPER_API_KEY", "serper-key")
        monkeypatch.setenv("MY_BRAVE", "brave-key")
        serper = WebTools(ToolsConfig(provider="serper", url=api.url), None).web_search("red shoes")
        brave = WebTools(ToolsConfig(provider="brave", url=api.url, api_key_env="MY_BRAVE"), None).web_search("x")
        monkeypatch.setenv("SERPER_API_KEY", "wrong")
        refused = WebTools(ToolsConfig(provider="serper", url=api.url), None).web_search("red shoes")
    finally:
        api.server.shutdown()
        api.server.server_close()
    assert serper.text == "1. Serper on red shoes\nhttps://a.example/\ns"
    assert brave.text == "1. Brave result\nhttps://b.example/\nd"
    assert refused.text.startswith("search failed: serper did not answer: HTTP Error 401")
