"""presets/default.toml is generated from the configuration dataclasses: their defaults and
comments are its one source (`automemo config defaults [--write]`)."""

from __future__ import annotations

import dataclasses
import re

from automemo.config import PRESETS_DIR, RunConfig
from automemo.defaults_toml import default_toml, field_comment
from automemo.search.config import SearchConfig


def test_default_toml_is_generated_from_the_dataclasses():
    """One source: the shipped file is what the dataclasses' defaults and comments generate."""
    assert (PRESETS_DIR / "default.toml").read_text() == default_toml(), (
        "presets/default.toml is stale: run `python3 -m automemo config defaults --write`")


def test_every_generated_key_says_why():
    """A field added without a comment would reach default.toml unexplained (keys right under
    one comment share it: update_timeout_s and retrieve_timeout_s)."""
    explained = False
    for line in default_toml().splitlines():
        if not line.strip() or line.startswith("["):
            explained = False
        elif re.match(r"^(# )?\w+ = ", line):
            assert explained, f"default.toml key without a comment: {line!r}"
        elif line.startswith("#"):
            explained = True


def test_the_generated_file_carries_the_dataclasses_values():
    text = default_toml(dataclasses.replace(RunConfig(), search=SearchConfig(steps=7)))
    assert "\nsteps = 7\n" in text and "\nsteps = 20\n" not in text




def test_a_field_comment_is_the_block_above_it_and_its_trailing_comment():
    from automemo.llm.config import LLMConfig, RoleConfig

    assert field_comment(RoleConfig, "model") == ["# model name; empty = role not configured"]
    assert field_comment(LLMConfig, "breaker_failures")[0].startswith("# LLM calls in a row that fail")
    assert field_comment(SearchConfig, "no_such_field") == []


def test_config_defaults_prints_the_file_and_write_keeps_it_current(capsys):
    from automemo.cli import main

    assert main(["config", "defaults"]) == 0
    assert capsys.readouterr().out == (PRESETS_DIR / "default.toml").read_text()
