"""The LLM client against the fake server replaying what real servers do: OpenAI's reasoning
models refusing `max_tokens` and `temperature`, a text-only model refusing image parts, `<think>`
blocks, answers cut at the completion cap, a stream that stalls mid-answer, a dead endpoint."""

from __future__ import annotations

import socket

import pytest
from PIL import Image

from automemo.llm import LLMClient, LLMConfig, LLMError, RoleConfig, user_message
from automemo.llm.breaker import EndpointDown
from automemo.llm.quirks import Quirk, strip_think
from automemo.measurements.stand_ins.fakellm import FakeLLM

FAST = dict(retry_backoff_s=0.01, retry_backoff_max_s=0.02)


def _client(url: str, warnings: list[str] | None = None, **role) -> LLMClient:
    cfg = RoleConfig(model="o4-mini", base_url=url, **{**FAST, **role})
    client = LLMClient(LLMConfig(meta=cfg))
    if warnings is not None:
        client.warn = warnings.append
    return client


def test_a_reasoning_model_is_asked_once_per_quirk_then_served_as_it_wants():
    with FakeLLM(rejects={"max_tokens", "temperature"}) as fake:
        fake.script(["first", "second"])
        client = _client(fake.base_url)
        assert client.chat("meta", [user_message("hi")], max_tokens=99).text == "first"
        assert client.chat("meta", [user_message("again")], max_tokens=77).text == "second"
        sent = fake.requests
    # refused twice (one quirk each), then every call of the run goes out adapted
    assert [("max_tokens" in r, "temperature" in r) for r in sent] == [
        (True, True), (False, True), (False, False), (False, False)]
    assert sent[2]["max_completion_tokens"] == 99 and sent[3]["max_completion_tokens"] == 77
    assert client.quirks("meta") == {Quirk.MAX_COMPLETION_TOKENS, Quirk.NO_TEMPERATURE}
    assert [r["status"] for r in client.ledger.rows()] == ["http 400", "http 400", "ok", "ok"]


def test_a_text_only_server_turns_the_role_text_only_with_one_warning(tmp_path):
    image = Image.new("RGB", (4, 4))
    warnings: list[str] = []
    with FakeLLM(rejects={"images"}) as fake:
        fake.script(["seen", "seen again"])
        client = _client(fake.base_url, warnings)
        assert client.vision("meta")
        assert client.chat("meta", [user_message("look", images=[image])]).text == "seen"
        assert client.chat("meta", [user_message("look", images=[image])]).text == "seen again"
        sent = fake.requests
    assert [isinstance(r["messages"][0]["content"], list) for r in sent] == [True, False, False]
    assert "1 image(s) left out" in sent[1]["messages"][0]["content"]
    assert len(warnings) == 1 and "text-only" in warnings[0] and "llm.meta.vision = false" in warnings[0]
    assert not client.vision("meta")


def test_think_blocks_are_stripped_and_a_cut_answer_says_so():
    with FakeLLM() as fake:
        fake.script(["<think>the user wants x\nso y</think>\nSUMMARY: y",
                     {"content": "```python\nclass Memo:\n    def upd", "finish_reason": "length"}])
        client = _client(fake.base_url)
        answer = client.chat("meta", [user_message("hi")])
        cut = client.chat("meta", [user_message("hi")])
    assert answer.text == "SUMMARY: y" and answer.finish_reason == "stop"
    assert cut.finish_reason == "length" and cut.text.endswith("def upd")
    assert strip_think("</think>answer") == "answer"      # the template opened the block
    assert strip_think("<think>still thinking") == ""      # cut before the answer began


@pytest.mark.parametrize("ping_every", [None, 0.1])
def test_a_stalled_stream_is_closed_before_the_retry_is_sent(ping_every):
    with FakeLLM(stall_s=10) as fake:  # with pings: keep-alive comments are not progress
        fake.script([{"content": "a long answer that stops", "stall_after": 2, "ping_every": ping_every},
                     "complete"])
        client = _client(fake.base_url, stall_timeout_s=0.4, first_token_timeout_s=5)
        result = client.chat("meta", [user_message("hi")])
        events = fake.events
    assert result.text == "complete"
    kinds = [(kind, connection) for kind, _, connection in events]
    first, retry = kinds[0][1], kinds[-1][1]
    assert kinds == [("request", first), ("closed", first), ("request", retry)], \
        "the server saw the stalled connection closed before the retry arrived"
    assert [r["status"] for r in client.ledger.rows()] == ["stalled", "ok"]


def test_prompt_cache_reuse_reaches_the_ledger():
    with FakeLLM() as fake:
        fake.script([{"content": "ok", "cached_tokens": 1200}])
        client = _client(fake.base_url)
        assert client.chat("meta", [user_message("hi")]).cached_tokens == 1200
    assert client.ledger.rows()[0]["cached_tokens"] == 1200


def _dead_url() -> str:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_dead_endpoint_trips_the_breaker_on_the_third_failed_call():
    client = _client(_dead_url(), max_retries=1)
    for _ in range(2):
        with pytest.raises(LLMError, match="connection"):
            client.chat("meta", [user_message("hi")])
    with pytest.raises(EndpointDown, match="3 LLM calls in a row failed"):
        client.chat("meta", [user_message("hi")])
    attempts = len(client.ledger.rows())
    with pytest.raises(EndpointDown):  # tripped: no further attempt is made
        client.chat("meta", [user_message("hi")])
    assert len(client.ledger.rows()) == attempts == 6


def test_a_request_error_does_not_count_toward_the_breaker():
    with FakeLLM() as fake:
        fake.script([{"status": 404, "content": "no such model"}] * 4)
        client = _client(fake.base_url)
        for _ in range(4):
            with pytest.raises(LLMError, match="http 404"):
                client.chat("meta", [user_message("hi")])
