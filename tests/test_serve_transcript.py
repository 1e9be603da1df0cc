"""A transcript string's turns: `role: text` and `[role]: text` lines, continuation lines, and
what stays one message."""

from automemo.serve.transcript import transcript_turns


def test_role_lines_become_turns_and_continuations_join_their_turn():
    assert transcript_turns("user: hi\nassistant: hello\nthere\n\nuser: bye") == [
        ("user", "hi"), ("assistant", "hello\nthere"), ("user", "bye")]
    assert transcript_turns("[Dr. Lee]: take two\n[Sam]: ok") == [("Dr. Lee", "take two"), ("Sam", "ok")]


def test_plain_messages_stay_one():
    for text in ("Note: the key is under the pot", "hello\nuser: hi\nbot: yo", "just words",
                 "My plan for today, in order: wake up: eat", ""):
        assert transcript_turns(text) is None, text
