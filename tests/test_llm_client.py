"""LLMClient against the real fake OpenAI-compatible server: retries, errors, ledger, prices, caps,
and multimodal message encoding."""

from __future__ import annotations

import base64
import io
import threading
import time

import pytest
from PIL import Image

from automemo.configtools import ConfigError
from automemo.llm.tokens import estimate_tokens
from automemo.llm import (
    BudgetExceeded, ContextLengthError, LLMClient, LLMConfig, LLMError, Ledger, RoleConfig, system_message, user_message,
)
from automemo.llm.prices import PriceTable

FAST = dict(retry_backoff_s=0.01, retry_backoff_max_s=0.05)


def _config(fake, **top) -> LLMConfig:
    role = RoleConfig(model="gpt-4o-mini", base_url=fake.base_url, timeout_s=5.0, **FAST)
    return LLMConfig(meta=role, memo=role, **top)


def _hi(client: LLMClient, **kw):
    return client.chat("meta", [user_message("hi")], **kw)


def test_chat_returns_text_tokens_cost_and_writes_a_ledger_row(fake_llm, tmp_path):
    ledger = Ledger(tmp_path / "tree.db")
    client = LLMClient(_config(fake_llm), ledger)
    fake_llm.script([{"content": "hello", "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 1_000_000}}])
    result = client.chat("meta", [system_message("be brief"), user_message("hi")], node=7, purpose="analysis")
    assert result.text == "hello"
    assert (result.prompt_tokens, result.completion_tokens) == (1_000_000, 1_000_000)
    assert result.cost_usd == pytest.approx(0.15 + 0.60)
    (row,) = Ledger(tmp_path / "tree.db").rows()  # a second connection sees the committed row
    assert (row["role"], row["node"], row["purpose"], row["status"]) == ("meta", "7", "analysis", "ok")
    assert row["usd"] == pytest.approx(0.75)
    assert client.totals()["meta"]["calls"] == 1


def test_request_carries_role_defaults_and_overrides(fake_llm):
    client = LLMClient(_config(fake_llm))
    _hi(client)
    _hi(client, max_tokens=5, temperature=0.7)
    first, second = fake_llm.requests
    assert (first["model"], first["max_tokens"], first["temperature"]) == ("gpt-4o-mini", 1024, 0.0)
    assert (second["max_tokens"], second["temperature"]) == (5, 0.7)


@pytest.mark.parametrize("failure", [{"status": 429}, {"status": 500}, {"status": 503}])
def test_retries_transient_statuses_and_ledgers_every_attempt(fake_llm, failure):
    client = LLMClient(_config(fake_llm))
    # Two different bodies: the same 500 twice is not transient (see the test below).
    fake_llm.script([failure, {**failure, "content": "another"}, "finally"])
    assert _hi(client).text == "finally"
    statuses = [r["status"] for r in client.ledger.rows()]
    assert statuses == [f"http {failure['status']}"] * 2 + ["ok"]
    assert client.totals()["meta"]["failed"] == 2


def test_the_same_500_twice_is_not_retried_further(fake_llm):
    cfg = _config(fake_llm)
    client = LLMClient(LLMConfig(meta=RoleConfig(**{**cfg.meta.__dict__, "max_retries": 4})))
    template = 'can only concatenate str (not "list") to str'
    fake_llm.script([{"status": 500, "content": template}] * 5)
    with pytest.raises(LLMError, match="the same server error twice") as err:
        _hi(client)
    assert err.value.attempts == 2 and len(fake_llm.requests) == 2


def test_a_context_overflow_is_its_own_error_and_not_retried(fake_llm):
    client = LLMClient(_config(fake_llm))
    fake_llm.script([{"status": 400, "content": "the request exceeds the available context size, "
                                                "try increasing it"}])
    with pytest.raises(ContextLengthError, match="context_tokens"):
        _hi(client)
    assert len(fake_llm.requests) == 1


def test_a_known_context_lowers_the_completion_cap_to_what_is_left(fake_llm):
    cfg = _config(fake_llm)
    client = LLMClient(LLMConfig(meta=RoleConfig(**{**cfg.meta.__dict__, "context_tokens": 1000})))
    client.chat("meta", [user_message("x" * 2000)], max_tokens=900)  # ~667 prompt tokens by the estimate
    client.chat("meta", [user_message("x" * 4000)], max_tokens=900)  # no room left: a floor
    first, second = (r["max_tokens"] for r in fake_llm.requests)
    assert first == 1000 - estimate_tokens("x" * 2000) == 333 and second == 225


@pytest.mark.parametrize("stream, limit, status", [(False, "timeout_s", "timeout"),
                                                    (True, "first_token_timeout_s", "stalled")])
def test_retries_a_timeout(fake_llm, stream, limit, status):
    cfg = _config(fake_llm)
    client = LLMClient(LLMConfig(meta=RoleConfig(**{**cfg.meta.__dict__, "stream": stream, limit: 0.3})))
    fake_llm.script([{"content": "slow", "delay": 1.5}, "quick"])
    assert _hi(client).text == "quick"
    assert [r["status"] for r in client.ledger.rows()] == [status, "ok"]


def test_connection_refused_is_retried_then_named_in_the_error(fake_llm):
    url = fake_llm.base_url
    fake_llm.stop()
    client = LLMClient(LLMConfig(meta=RoleConfig(model="m", base_url=url, max_retries=2, **FAST)))
    with pytest.raises(LLMError) as err:
        _hi(client)
    message = str(err.value)
    assert "'meta'" in message and "'m'" in message and url in message and "connection" in message
    assert err.value.attempts == 3 and err.value.status == "connection"


def test_gives_up_after_max_retries_with_the_last_status(fake_llm):
    client = LLMClient(LLMConfig(meta=RoleConfig(model="m", base_url=fake_llm.base_url, max_retries=1, **FAST)))
    fake_llm.script([{"status": 500}, {"status": 429}, "never reached"])
    with pytest.raises(LLMError, match=r"after 2 attempt\(s\); last status: http 429"):
        _hi(client)
    assert fake_llm.pending == 1


def test_client_errors_are_not_retried(fake_llm):
    client = LLMClient(_config(fake_llm))
    fake_llm.script([{"status": 404, "content": "model not found"}, "unused"])
    with pytest.raises(LLMError, match="http 404.*model not found"):
        _hi(client)
    assert len(fake_llm.requests) == 1


@pytest.mark.parametrize("raw", ["this is not json", '{"foo": 1}', '{"choices": []}',
                                 '{"choices": [{"message": {"role": "assistant"}}]}'])
def test_garbage_answers_raise_llm_error(fake_llm, raw):
    client = LLMClient(_config(fake_llm))
    fake_llm.script([{"raw": raw}])
    with pytest.raises(LLMError, match="bad-response"):
        _hi(client)
    assert client.ledger.rows()[0]["status"] == "bad-response"


def test_missing_usage_is_estimated(fake_llm):
    client = LLMClient(_config(fake_llm))
    fake_llm.script([{"raw": '{"model": "gpt-4o-mini", "choices": [{"message": {"role": "assistant", "content": "abcdefgh"}}]}'}])
    result = _hi(client)
    # The estimate (3 characters a token, rounded up): "abcdefgh" is 3, the prompt "hi" 1.
    assert result.text == "abcdefgh" and result.completion_tokens == 3 and result.prompt_tokens == 1


def test_unconfigured_role_and_missing_key_are_clear(monkeypatch, fake_llm):
    client = LLMClient(_config(fake_llm))
    assert client.configured("meta") and not client.configured("judge")
    with pytest.raises(LLMError, match=r"role 'judge' is not configured.*llm.judge.model"):
        client.chat("judge", [user_message("x")])
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(LLMError, match="MY_KEY is empty"):
        LLMClient(LLMConfig(agent=RoleConfig(model="gpt-4o", api_key_env="MY_KEY")))


def test_api_key_is_read_from_the_named_variable_and_never_in_the_config(monkeypatch, fake_llm):
    monkeypatch.setenv("MY_KEY", "sk-secret-123")
    cfg = LLMConfig(meta=RoleConfig(model="m", base_url=fake_llm.base_url, api_key_env="MY_KEY"))
    client = LLMClient(cfg)
    assert client._sdk("meta").api_key == "sk-secret-123"
    assert "sk-secret" not in repr(cfg)


def test_caps_raise_before_the_call_that_would_start_past_them(fake_llm):
    client = LLMClient(_config(fake_llm, max_total_tokens=100))
    fake_llm.script([{"content": "a", "usage": {"prompt_tokens": 60, "completion_tokens": 10}},
                     {"content": "b", "usage": {"prompt_tokens": 60, "completion_tokens": 10}}])
    _hi(client)  # 70 < 100: the next one may start
    _hi(client)  # starts at 70, ends at 140
    assert client.exhausted() and "140" in client.exhausted()
    with pytest.raises(BudgetExceeded, match="token cap"):
        _hi(client)
    assert len(fake_llm.requests) == 2  # the refused call never reached the server


def test_usd_cap_counts_what_a_resumed_ledger_already_spent(fake_llm, tmp_path):
    db = tmp_path / "tree.db"
    first = LLMClient(_config(fake_llm), Ledger(db))
    fake_llm.script([{"content": "x", "usage": {"prompt_tokens": 0, "completion_tokens": 2_000_000}}])
    _hi(first)  # 2M output tokens of gpt-4o-mini: $1.20
    resumed = LLMClient(_config(fake_llm, max_usd=1.0), Ledger(db))
    with pytest.raises(BudgetExceeded, match="USD cap"):
        _hi(resumed)
    assert isinstance(BudgetExceeded("x"), Exception) and not isinstance(BudgetExceeded("x"), LLMError)


def test_concurrent_calls_are_all_accounted(fake_llm):
    client = LLMClient(_config(fake_llm))
    fake_llm.latency = 0.02
    threads = [threading.Thread(target=_hi, args=(client,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    totals = client.totals()["meta"]
    assert totals["calls"] == 8
    assert client.guard.spent.tokens == totals["prompt_tokens"] + totals["completion_tokens"] > 0


def test_embed_uses_the_model_override_and_keeps_order(fake_llm):
    client = LLMClient(_config(fake_llm))
    vectors = client.embed("memo", ["a", "b", "a"], node=3, purpose="index", model="text-embedding-3-small")
    assert len(vectors) == 3 and vectors[0] == vectors[2] != vectors[1]
    assert fake_llm.requests[-1]["model"] == "text-embedding-3-small"
    (row,) = client.ledger.rows(kind="embed")
    assert (row["role"], row["node"], row["model"]) == ("memo", "3", "text-embedding-3-small")


def test_prices_match_snapshots_prefixes_overrides_and_unknowns():
    table = PriceTable({"my-local": (1.0, 2.0), "gpt-4o": (3.0, 3.0)})
    assert table.lookup("gpt-4o-mini-2024-07-18") == (0.15, 0.60)  # longest prefix, not gpt-4o
    assert table.lookup("openai/gpt-4o") == (3.0, 3.0)  # override wins
    assert table.cost("my-local", 1_000_000, 500_000).usd == pytest.approx(2.0)
    unknown = table.cost("llama-3-8b", 10, 10)
    assert (unknown.usd, unknown.priced) == (0.0, False)


def test_unpriced_models_are_reported_in_totals(fake_llm):
    client = LLMClient(LLMConfig(meta=RoleConfig(model="llama-local", base_url=fake_llm.base_url)))
    _hi(client)
    assert client.totals()["meta"]["unpriced_models"] == ["llama-local"]


def test_config_builds_from_a_mapping_and_rejects_unknown_keys():
    cfg = LLMConfig.from_mapping({"meta": {"model": "gpt-4o", "max_retries": 2},
                                  "max_usd": 5, "prices": {"x": [1, 2]}})
    assert cfg.meta.max_retries == 2 and cfg.max_usd == 5.0 and cfg.prices == {"x": (1.0, 2.0)}
    with pytest.raises(ConfigError, match="llm.meta.modle"):
        LLMConfig.from_mapping({"meta": {"modle": "gpt-4o"}})


def _png(color) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buf, format="PNG")
    return buf.getvalue()


def test_user_message_encodes_bytes_paths_and_pil_images_as_data_urls(tmp_path):
    path = tmp_path / "blue.png"
    path.write_bytes(_png("blue"))
    jpeg = io.BytesIO()
    Image.new("RGB", (4, 4), "green").save(jpeg, format="JPEG")
    message = user_message("look", [_png("red"), path, Image.new("RGB", (4, 4), "white"), jpeg.getvalue()])
    text, *images = message["content"]
    assert text == {"type": "text", "text": "look"}
    urls = [part["image_url"]["url"] for part in images]
    assert urls[0].startswith("data:image/png;base64,") and urls[3].startswith("data:image/jpeg;base64,")
    decoded = Image.open(io.BytesIO(base64.b64decode(urls[1].split(",", 1)[1])))
    assert decoded.getpixel((0, 0)) == (0, 0, 255)
    assert user_message("plain") == {"role": "user", "content": "plain"}
    with pytest.raises(ValueError, match="not PNG, JPEG"):
        user_message("x", [b"not an image"])


def test_multimodal_message_reaches_the_server_intact(fake_llm):
    client = LLMClient(_config(fake_llm))
    answer = client.chat("meta", [user_message("what colour?", [_png("red")])])
    assert answer.text == "what colour?"  # echo fallback reads the text part
    content = fake_llm.requests[0]["messages"][0]["content"]
    assert content[1]["type"] == "image_url" and content[1]["image_url"]["url"].startswith("data:image/png")


def test_a_servers_retry_after_is_honoured_up_to_the_backoff_ceiling(fake_llm):
    role = RoleConfig(model="m", base_url=fake_llm.base_url, retry_backoff_s=0.01, retry_backoff_max_s=0.4)
    client = LLMClient(LLMConfig(meta=role))
    fake_llm.script([{"status": 429, "headers": {"Retry-After": "0.3"}}, "ok",
                     {"status": 429, "headers": {"Retry-After": "3600"}}, "ok again"])
    started = time.monotonic()
    assert _hi(client).text == "ok"
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    assert _hi(client).text == "ok again"
    assert time.monotonic() - started < 5  # an hour asked, the ceiling (0.4 s) applied


def test_a_programming_error_is_not_disguised_as_a_server_failure(fake_llm):
    client = LLMClient(_config(fake_llm))
    with pytest.raises(TypeError):
        client.chat("meta", [{"role": "user", "content": object()}])
    assert fake_llm.requests == [] and client.ledger.rows()[0]["status"] == "error"
