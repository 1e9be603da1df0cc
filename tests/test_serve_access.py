"""The serve side's authorisation and rate limit as plain functions: token specs and files,
which namespace a request acts on, and the token bucket on a fake clock."""

from __future__ import annotations

import json

import pytest

from automemo.serve.access import (
    LOCAL, PRINCIPAL_KEY, AccessConfigError, NamespaceRefused, Principal, namespace_for, principal_of, token_table,
)
from automemo.serve.http.policy import HttpPolicy
from automemo.serve.http.rate_limit import RateLimiter

ENV = {"ALL_TOKEN": "all-tok", "ANA_TOKEN": "ana-tok", "PAIR_TOKEN": "pair-tok"}


def test_token_specs_bind_tokens_to_namespaces():
    table = token_table(["ALL_TOKEN", "ANA_TOKEN=ana", "PAIR_TOKEN=ana, bob", "UNSET_TOKEN"], None, ENV)
    assert len(table.entries) == 3  # an unset plain NAME adds no token
    everyone = table.authenticate(b"Bearer all-tok")
    ana = table.authenticate(b"Bearer ana-tok")
    pair = table.authenticate(b"Bearer pair-tok")
    assert table.authenticate(b"Bearer nope") is None and table.authenticate(b"all-tok") is None
    assert "all-tok" not in repr(everyone)  # a principal never carries its token

    assert namespace_for(everyone, "bob") == "bob" and namespace_for(everyone, "") == "default"
    assert namespace_for(ana, "") == "ana" and namespace_for(ana, "ana") == "ana"
    with pytest.raises(NamespaceRefused, match="may not use the memory of user 'bob'; it may use 'ana'"):
        namespace_for(ana, "bob")
    assert namespace_for(pair, "bob") == "bob"
    with pytest.raises(NamespaceRefused, match="name one with"):
        namespace_for(pair, "")
    assert namespace_for(LOCAL, "anyone") == "anyone" and namespace_for(LOCAL, "") == "default"  # stdio
    with pytest.raises(NamespaceRefused, match="carries no caller"):
        namespace_for(None, "anyone")  # no caller is no one, never every one


def test_bad_token_configuration_is_a_sentence(tmp_path):
    with pytest.raises(AccessConfigError, match="ANA_TOKEN .* is empty"):
        token_table(["ANA_TOKEN=ana"], None, {})
    with pytest.raises(AccessConfigError, match="same token"):
        token_table(["ALL_TOKEN", "COPY=ana"], None, {**ENV, "COPY": "all-tok"})
    path = tmp_path / "tokens.json"
    for content, sentence in ((json.dumps({"tokens": [{"token": "t", "namespaces": []}]}), "non-empty list"),
                              (json.dumps({"tokens": []}), "needs a non-empty list"),
                              ("{", "not readable JSON")):
        path.write_text(content)
        path.chmod(0o600)
        with pytest.raises(AccessConfigError, match=sentence):
            token_table([], path, {})
    path.write_text(json.dumps({"tokens": [{"token": "file-tok", "namespaces": ["*"]}]}))
    assert token_table([], path, {}).authenticate(b"Bearer file-tok").unbound
    path.chmod(0o640)
    with pytest.raises(AccessConfigError, match="chmod 600"):
        token_table([], path, {})


def test_a_scope_the_guard_never_saw_is_refused():
    with pytest.raises(NamespaceRefused, match="no HTTP request"):
        principal_of(None)  # fails closed: it once answered LOCAL, every namespace
    bound = Principal("t", frozenset({"ana"}))
    assert principal_of({PRINCIPAL_KEY: bound}) is bound
    with pytest.raises(NamespaceRefused):
        principal_of({"type": "http"})


def test_host_names_follow_the_bind_address():
    assert HttpPolicy("127.0.0.1").host_names() == ("localhost", "127.0.0.1", "[::1]")
    assert HttpPolicy("::1").host_names() == ("localhost", "127.0.0.1", "[::1]")
    assert HttpPolicy("10.0.0.5", allowed_hosts=("mem.example",)).host_names() == ("10.0.0.5", "mem.example")
    assert HttpPolicy("0.0.0.0").host_names() == ("localhost", "127.0.0.1", "[::1]")


def test_the_token_bucket_allows_a_burst_then_the_rate():
    now = [0.0]
    limiter = RateLimiter(30, clock=lambda: now[0])  # one every 2 s, a burst of 5
    assert [limiter.take("a").allowed for _ in range(6)] == [True] * 5 + [False]
    assert limiter.take("a").retry_after == 2
    assert limiter.take("b").allowed  # another caller's own bucket
    now[0] += 2.0
    assert limiter.take("a").allowed and not limiter.take("a").allowed
    now[0] += 60.0
    assert sum(limiter.take("a").allowed for _ in range(10)) == 5  # refilled to the burst, no more
