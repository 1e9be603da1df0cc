"""Where a request's heavy parsing runs: never on the event loop. A request carrying images
(base64 to decode, pixels to check) is parsed on the image workers, few on purpose: a tenant
flooding large images queues on them instead of taking every core from other tenants' calls.
They also run at a lower CPU priority (a higher nice value), so that on a busy machine another
tenant's recall gets the core first. A request without images is parsed in place: a thread hop
would cost it more than its parse."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Callable, TypeVar

from automemo.serve.defaults import IMAGE_WORKERS
from automemo.serve.requests import BadRequest

T = TypeVar("T")
_LIGHT_BYTES = 64_000  # a body below this without a data URL holds no image and parses in microseconds


class Offload:
    def __init__(self, workers: int = IMAGE_WORKERS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="automemo-images",
                                        initializer=_yield_cpu)

    async def parse(self, raw: bytes, parse: Callable[[Any], T]) -> T:
        """`parse(the JSON of raw)`, on the image workers unless `raw` is light."""
        if len(raw) < _LIGHT_BYTES and b"data:image" not in raw:
            return parse(json_of(raw))
        return await asyncio.get_running_loop().run_in_executor(self._pool, partial(_parsed, raw, parse))

    async def run(self, work: Callable[[], T]) -> T:
        """`work()` on the image workers."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, work)


def _yield_cpu() -> None:
    """This thread (Linux schedules threads one by one) at nice +10."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass  # not Linux: the workers' small number is the bound


def _parsed(raw: bytes, parse: Callable[[Any], T]) -> T:
    return parse(json_of(raw))


def json_of(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"the body is not valid JSON ({exc.__class__.__name__} at position "
                         f"{getattr(exc, 'pos', getattr(exc, 'start', 0))})") from None
