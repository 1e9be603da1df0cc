"""Small MiniLM calls (a question, an entity name) run on one torch thread, batches on the
default: a sentence split over two threads of a busy 2-core machine waits on itself."""

from __future__ import annotations

import pytest

from automemo.toolkit.text_encoders import ONE_THREAD_TEXTS, _torch_threads

torch = pytest.importorskip("torch")


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_a_small_call_runs_on_one_thread_and_a_batch_on_the_default(two_threads):
    seen = []
    for n_texts in (1, ONE_THREAD_TEXTS, ONE_THREAD_TEXTS + 1):
        with _torch_threads(n_texts):
            seen.append(torch.get_num_threads())
    assert seen == [1, 1, 2]
    assert torch.get_num_threads() == 2


def test_the_thread_count_is_restored_when_the_call_fails(two_threads):
    with pytest.raises(RuntimeError):
        with _torch_threads(1):
            raise RuntimeError("encoder failed")
    assert torch.get_num_threads() == 2
