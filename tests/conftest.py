"""Shared pytest fixtures. Keep this file small: fixtures that one test file needs live there."""

from __future__ import annotations

import pytest

from automemo.fakellm import FakeLLM


@pytest.fixture
def fake_llm():
    """A started OpenAI-compatible fake server on 127.0.0.1 (see automemo.fakellm); stopped after."""
    with FakeLLM() as server:
        yield server
