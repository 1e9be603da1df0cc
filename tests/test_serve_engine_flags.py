"""`automemo serve`'s engine flags: a wrong combination is a sentence and exit status 2, before
any memory loads or any cluster starts."""

from __future__ import annotations

import pytest

from automemo.cli import main


@pytest.mark.parametrize("flags, sentence", [
    (["--engine", "ray", "--transport", "stdio"], "--engine ray serves over HTTP only"),
    (["--replicas", "3"], "--address and --replicas belong to --engine ray"),
    (["--address", "auto"], "--address and --replicas belong to --engine ray"),
    (["--engine", "ray", "--replicas", "0"], "--replicas must be at least 1, got 0"),
])
def test_a_wrong_engine_flag_is_a_sentence(tmp_path, capsys, flags, sentence):
    assert main(["serve", str(tmp_path / "memo"), *flags]) == 2
    err = capsys.readouterr().err
    assert sentence in err and "Traceback" not in err
    assert not (tmp_path / "memo-state").exists()  # nothing was prepared
