"""The fake OpenAI-compatible server, driven through the real `openai` SDK over HTTP."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import openai
import pytest

from automemo.measurements.stand_ins.fakellm import FakeLLM, hash_embedding


def _client(fake: FakeLLM, **kw) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.base_url, api_key="test", max_retries=0, **kw)


def _ask(client: openai.OpenAI, text: str = "hi") -> str:
    out = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return out.choices[0].message.content


def test_script_is_consumed_in_order_then_fallback_echoes(fake_llm):
    client = _client(fake_llm)
    fake_llm.script(["first", {"content": "second"}])
    assert _ask(client) == "first"
    assert _ask(client) == "second"
    assert fake_llm.pending == 0
    assert _ask(client, "say this back") == "say this back"
    assert [r["messages"][0]["content"] for r in fake_llm.requests] == ["hi", "hi", "say this back"]


def test_usage_is_estimated_unless_given(fake_llm):
    client = _client(fake_llm)
    fake_llm.script(["x" * 40, {"content": "y", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}])
    first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a" * 80}])
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (20, 10)
    second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "a"}])
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (7, 3)


def test_error_statuses_reach_the_client_as_api_errors(fake_llm):
    client = _client(fake_llm)
    fake_llm.script([{"status": 429}, {"status": 503, "content": "overloaded"}])
    with pytest.raises(openai.RateLimitError):
        _ask(client)
    with pytest.raises(openai.InternalServerError, match="overloaded"):
        _ask(client)


def test_delay_makes_a_short_client_timeout_fire(fake_llm):
    client = _client(fake_llm, timeout=0.2)
    fake_llm.script([{"content": "late", "delay": 1.0}])
    with pytest.raises(openai.APITimeoutError):
        _ask(client)


def test_raw_garbage_body_is_sent_verbatim(fake_llm):
    fake_llm.script([{"raw": "this is not json"}])
    req = urllib.request.Request(
        fake_llm.base_url + "/chat/completions",
        data=json.dumps({"model": "m", "messages": []}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as resp:
        assert resp.status == 200
        assert resp.read() == b"this is not json"


def test_handler_answers_after_script_and_sees_request(fake_llm):
    fake_llm.set_handler(lambda body: f"model={body['model']}")
    assert _ask(_client(fake_llm)) == "model=m"


def test_error_fallback_is_loud():
    with FakeLLM(fallback="error") as fake:
        with pytest.raises(openai.InternalServerError, match="no scripted response"):
            _ask(_client(fake))


def test_embeddings_are_deterministic_unit_vectors():
    with FakeLLM(embedding_dim=16) as fake:
        client = _client(fake)
        out = client.embeddings.create(model="e", input=["cat", "dog", "cat"])
        vecs = [d.embedding for d in out.data]
        assert len(vecs[0]) == 16
        assert vecs[0] == vecs[2] != vecs[1]
        assert abs(sum(v * v for v in vecs[1]) - 1.0) < 1e-9
        assert vecs[1] == pytest.approx(hash_embedding("dog", 16))


def test_models_route_and_unknown_route(fake_llm):
    with urllib.request.urlopen(fake_llm.base_url + "/models") as resp:
        assert json.load(resp)["data"][0]["id"] == "fake-model"
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(fake_llm.base_url + "/nothing")
    assert err.value.code == 404


def test_concurrent_requests_are_all_recorded(fake_llm):
    fake_llm.latency = 0.05
    client = _client(fake_llm)
    answers: list[str] = []
    threads = [threading.Thread(target=lambda i=i: answers.append(_ask(client, f"q{i}"))) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(answers) == sorted(f"q{i}" for i in range(8))
    assert len(fake_llm.requests) == 8


def test_stop_releases_the_port():
    fake = FakeLLM().start()
    url = fake.base_url
    fake.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/models", timeout=2)
    with pytest.raises(RuntimeError, match="not started"):
        _ = fake.base_url
