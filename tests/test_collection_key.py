"""The key under which update episodes are cached in an episode store (shared between
`automemo eval` runs by default) names everything that shapes those episodes."""

from __future__ import annotations

from automemo.agents.web import WebAgent
from automemo.benchmarks import load
from automemo.evaluation.collect import collection_group
from automemo.llm import LLMClient, LLMConfig, RoleConfig


def test_the_update_cache_key_names_the_agents_model_and_endpoint(monkeypatch):
    """Two models behind the same agent code play the update tasks differently: a store shared
    between evaluations (the CLI's default) must not hand one model's episodes to the other."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-placeholder")  # the client checks for one without a base_url
    bench = load("miniwob", {"tasks": ["click-button"]})  # no browser starts until an episode runs

    def group(**role):
        return collection_group(bench, WebAgent(LLMClient(LLMConfig(agent=RoleConfig(**role)))), "train")

    local = group(model="a", base_url="http://127.0.0.1:8000/v1")
    assert group(model="a", base_url="http://127.0.0.1:8000/v1/") == local
    assert group(model="b", base_url="http://127.0.0.1:8000/v1") != local
    assert group(model="a", base_url="http://127.0.0.1:9000/v1") != local
    assert group(model="a", base_url="http://127.0.0.1:8000/v1", temperature=0.7) != local
    # No base_url: the SDK's endpoint, which OPENAI_BASE_URL moves.
    default = group(model="a")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    assert group(model="a") == local != default
