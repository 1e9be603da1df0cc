"""The preflight check of a search's LLM endpoints, against the real fake HTTP server and a port
nobody listens on. (The search end to end, dead endpoint then resume: test_dead_endpoint.py.)"""

from __future__ import annotations

import socket

import pytest

from automemo.failures import InfrastructureFailure
from automemo.llm import LLMConfig, RoleConfig
from automemo.llm.preflight import EndpointUnreachable, check_endpoints
from automemo.measurements.stand_ins.fakellm import FakeLLM


def _dead_url() -> str:
    with socket.socket() as s:  # a port just freed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_a_live_endpoint_passes_with_the_model_list_alone(fake_llm):
    fake_llm.script(["the first answer of the search"])
    config = LLMConfig(meta=RoleConfig(model="m", base_url=fake_llm.base_url))
    check_endpoints(config, ["meta", "agent", "judge"])
    # GET /models costs no tokens and leaves the server's scripted answers to the search.
    assert fake_llm.requests == [] and fake_llm.pending == 1


def test_a_dead_endpoint_is_named_with_its_role_url_and_reason():
    url = _dead_url()
    config = LLMConfig(meta=RoleConfig(model="m", base_url=url))
    with pytest.raises(EndpointUnreachable) as caught:
        check_endpoints(config, ["meta"])
    message = str(caught.value)
    assert message.startswith(f"the meta LLM endpoint {url} does not answer: no connection")
    assert "refused" in message.lower()
    # The CLI turns an infrastructure failure into exit 1 with its sentence.
    assert isinstance(caught.value, InfrastructureFailure)


def test_only_the_roles_asked_and_configured_are_checked(fake_llm):
    dead = _dead_url()
    config = LLMConfig(meta=RoleConfig(model="m", base_url=fake_llm.base_url),
                       agent=RoleConfig(model="a", base_url=dead), judge=RoleConfig())
    check_endpoints(config, ["meta", "judge"])  # the dead agent is not used by this run
    with pytest.raises(EndpointUnreachable) as caught:
        check_endpoints(config, ["meta", "agent", "judge"])
    assert caught.value.roles == ("agent",) and caught.value.base_url == dead


def test_roles_sharing_an_endpoint_are_named_together():
    url = _dead_url()
    config = LLMConfig(meta=RoleConfig(model="m", base_url=url), judge=RoleConfig(model="j", base_url=url))
    with pytest.raises(EndpointUnreachable, match=rf"^the meta and judge LLM endpoint {url} does not answer"):
        check_endpoints(config, ["meta", "judge"])


def test_a_server_without_a_model_list_is_asked_for_one_token():
    with FakeLLM(list_models=False) as fake:
        check_endpoints(LLMConfig(meta=RoleConfig(model="m", base_url=fake.base_url)), ["meta"])
        [request] = fake.requests
    assert request["_path"].endswith("/chat/completions") and request["max_tokens"] == 1
    assert request["model"] == "m"


def test_a_server_answering_500_is_dead():
    with FakeLLM(list_models=False, fallback="error") as fake:
        with pytest.raises(EndpointUnreachable, match="does not answer: HTTP 500"):
            check_endpoints(LLMConfig(meta=RoleConfig(model="m", base_url=fake.base_url)), ["meta"])


def test_an_answer_about_the_request_shows_a_live_server():
    # A 400 (here: a reasoning model refusing max_tokens) is the server answering.
    with FakeLLM(list_models=False, rejects=["max_tokens"]) as fake:
        check_endpoints(LLMConfig(meta=RoleConfig(model="m", base_url=fake.base_url)), ["meta"])
        assert len(fake.requests) == 1


def test_a_search_checks_the_roles_it_calls():
    from types import SimpleNamespace

    from automemo.assembly import preflight_roles
    from automemo.llm import LLMClient

    url = "http://127.0.0.1:9/v1"  # never called: this only names the roles
    llm = LLMClient(LLMConfig(meta=RoleConfig(model="m", base_url=url), agent=RoleConfig(model="a", base_url=url),
                              memo=RoleConfig(model="e", base_url=url)))
    # An agent configured for a benchmark that scores without one is not called.
    assert preflight_roles(SimpleNamespace(llm=llm, agent=None)) == ("meta", "memo")
    assert preflight_roles(SimpleNamespace(llm=llm, agent=object())) == ("meta", "agent", "memo")
    offline = LLMClient(LLMConfig())
    assert preflight_roles(SimpleNamespace(llm=offline, agent=None)) == ()
