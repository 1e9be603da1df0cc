"""The benches' REST client of a real `automemo serve`: a JSON or JSON-lines POST answered with
(status, the JSON answer), an error status included (a refusal is a figure, not a crash)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def post(url: str, data: bytes, content_type: str, timeout: float = 120) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def post_json(url: str, body: Any) -> tuple[int, dict]:
    return post(url, json.dumps(body).encode(), "application/json")


def post_lines(url: str, lines: list[str]) -> tuple[int, dict]:
    return post(url, "".join(line + "\n" for line in lines).encode(), "application/x-ndjson", timeout=300)


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return json.loads(answer.read())
