"""A request carrying images is parsed off the event loop, on the image workers; a light one in
place."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from automemo.serve.offload import Offload
from automemo.serve.requests import BadRequest


def test_a_request_with_images_is_parsed_on_a_worker_and_a_light_one_in_place():
    def where(body):
        return threading.current_thread().name, body

    async def parse(raw):
        return await Offload().parse(raw, where)

    heavy = json.dumps({"images": ["data:image/png;base64,AAAA"]}).encode()
    light = json.dumps({"query": "where is my bike"}).encode()
    assert asyncio.run(parse(heavy))[0].startswith("automemo-images")
    assert asyncio.run(parse(light)) == (threading.current_thread().name, {"query": "where is my bike"})
    with pytest.raises(BadRequest, match="not valid JSON"):
        asyncio.run(parse(b"{not json"))
