"""What the host's encoders would cost a program that ran alone, with nothing cached.

A run shares one embedding cache between all its programs (and a data set may ship precomputed
vectors), so what a program's `toolkit.embed_*` calls actually cost depends on which programs ran
before it. A cost figure must not: it charges each text or image a program asks for the CPU the
encoder would spend on it cold, once per evaluation (a program alone still has the run's
content-hash cache for its own repeats).

    rates = EncodeRates()                     # one per process: each encoder measured once
    meter = ColdEncodeMeter(encoders, rates)  # one per evaluation
    meter.texts(["a turn", ...])              # charged cold, each distinct text once
    meter.charged_ms                          # CPU ms charged so far

The charge is `units × ms_per_unit`, with the rate measured on this machine the first time an
encoder is charged: a fixed set of texts (images) is encoded directly, bypassing every cache, and
its CPU time divided by its units. A text's units are its word pieces as the encoder reads them
(MiniLM: tokenized, cut at its window and padded to its bucket, `piece_counts`), else its UTF-8
bytes / 4 (an estimate used for the calibration too, so the rate fits it). An image is one unit.
An encoder behind an endpoint (`openai:*`) spends no host CPU: it is charged 0 (its price is
the LLM ledger's).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from automemo.toolkit.embedding_cache import content_key

CALIBRATION_WORDS = (
    "we talked about the trip to the coast last summer and the small hotel near the harbour "
    "where my sister stayed with her two children while the rain kept everyone inside for three "
    "days so we played cards read old magazines and planned a longer visit for the autumn when "
    "the museums reopen and the ferries run again on the weekday schedule"
).split()
CALIBRATION_LENGTHS = (12, 40, 100, 220)  # words a calibration text has: a short turn to a long one
CALIBRATION_BATCH = 8  # texts per call: one torch thread in MiniLM (text_encoders.ONE_THREAD_TEXTS)
CALIBRATION_IMAGES = 4
PIECE_MEMO_LIMIT = 1_000_000  # texts whose word-piece count is remembered across evaluations


@dataclass(frozen=True)
class EncodeRate:
    """CPU milliseconds an encoder spends per unit, and what it was measured on."""

    encoder: str
    ms_per_unit: float
    unit: str               # "word piece", "estimated word piece" (bytes / 4), "image", "remote call"
    measured_units: int = 0
    measured_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"encoder": self.encoder, "ms_per_unit": self.ms_per_unit, "unit": self.unit,
                "measured_units": self.measured_units, "measured_ms": self.measured_ms}


def estimated_pieces(text: str) -> int:
    """A text's word pieces without a tokenizer: its UTF-8 bytes / 4, and the two markers."""
    return len(text.encode("utf-8")) // 4 + 2


def calibration_texts() -> list[str]:
    """A fixed set of distinct texts at each calibration length, `CALIBRATION_BATCH` of each."""
    words, out = CALIBRATION_WORDS, []
    for length in CALIBRATION_LENGTHS:
        for shift in range(CALIBRATION_BATCH):
            out.append(" ".join(words[(shift * 7 + i) % len(words)] for i in range(length)) + f" ({shift})")
    return out


def text_units(encoder: Any, texts: Sequence[str]) -> tuple[list[int], str]:
    """Each text's units for `encoder` and the unit's name."""
    counts = getattr(encoder, "piece_counts", None)
    if counts is not None:
        return [int(n) for n in counts(list(texts))], "word piece"
    return [estimated_pieces(t) for t in texts], "estimated word piece"


def measure_text_rate(encoder: Any) -> EncodeRate:
    """Encode the calibration texts with `encoder` itself (no cache) and divide its CPU time by
    their units. Timed per thread, in calls of `CALIBRATION_BATCH` texts, which the local MiniLM
    runs on one torch thread in the calling thread: other work of the process is not counted."""
    name = str(getattr(encoder, "name", type(encoder).__name__))
    if name.startswith("openai:"):
        return EncodeRate(name, 0.0, "remote call")
    texts = calibration_texts()
    encoder.encode(texts[:2])  # loads the model: a cost of the process, not of a text
    units, unit = text_units(encoder, texts)
    spent = 0.0
    for start in range(0, len(texts), CALIBRATION_BATCH):
        began = time.thread_time()
        encoder.encode(texts[start:start + CALIBRATION_BATCH])
        spent += time.thread_time() - began
    total = max(1, sum(units))
    return EncodeRate(name, spent * 1000.0 / total, unit, total, spent * 1000.0)


def measure_image_rate(encoder: Any) -> EncodeRate:
    """Encode a few fixed synthetic images with `encoder` itself and divide its CPU time by their
    number. Process CPU time: an image model may run on several threads."""
    from PIL import Image

    name = str(getattr(encoder, "name", type(encoder).__name__))
    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (224, 224, 3), dtype=np.uint8)) for _ in range(CALIBRATION_IMAGES)]
    encoder.encode(images[:1])  # loads the model
    began = time.process_time()
    encoder.encode(images)
    spent = time.process_time() - began
    return EncodeRate(name, spent * 1000.0 / len(images), "image", len(images), spent * 1000.0)


class EncodeRates:
    """Each encoder's rate, measured the first time it is asked for (a second or so for MiniLM),
    and the word-piece counts of texts already charged, shared by every evaluation of a process."""

    def __init__(self, measure_text: Callable[[Any], EncodeRate] = measure_text_rate,
                 measure_image: Callable[[Any], EncodeRate] = measure_image_rate) -> None:
        self._measure_text = measure_text
        self._measure_image = measure_image
        self._rates: dict[tuple[str, str], EncodeRate] = {}
        self._pieces: dict[str, int] = {}
        self._lock = threading.Lock()
        self._path: Path | None = None

    def keep_in(self, path: Path) -> None:
        """Read the rates a run measured before from `path` and write there every rate measured
        from now on: a resumed search charges its new nodes at the rates its first nodes were
        charged at (a fresh measurement moves with the machine's load, ±20% here)."""
        with self._lock:
            self._path = Path(path)
            if self._path.is_file():
                for item in json.loads(self._path.read_text()).get("rates", []):
                    rate = EncodeRate(str(item["encoder"]), float(item["ms_per_unit"]), str(item["unit"]),
                                      int(item.get("measured_units", 0)), float(item.get("measured_ms", 0.0)))
                    self._rates.setdefault((str(item["kind"]), rate.encoder), rate)

    def _write(self) -> None:
        """The rates into the run's file (called with the lock held), replaced whole."""
        if self._path is None:
            return
        doc = {"rates": [{"kind": kind, **rate.to_dict()} for (kind, _), rate in sorted(self._rates.items())]}
        temporary = self._path.with_suffix(".tmp")
        temporary.write_text(json.dumps(doc, indent=2))
        os.replace(temporary, self._path)

    def text_rate(self, encoder: Any) -> EncodeRate:
        return self._rate("text", encoder, self._measure_text)

    def image_rate(self, encoder: Any) -> EncodeRate:
        return self._rate("image", encoder, self._measure_image)

    def _rate(self, kind: str, encoder: Any, measure: Callable[[Any], EncodeRate]) -> EncodeRate:
        key = (kind, str(getattr(encoder, "name", type(encoder).__name__)))
        with self._lock:  # measured once, and never two measurements at once on one machine
            if key not in self._rates:
                self._rates[key] = measure(encoder)
                self._write()
            return self._rates[key]

    def measured(self) -> list[EncodeRate]:
        with self._lock:
            return list(self._rates.values())

    def units(self, encoder: Any, keys: Sequence[str], texts: Sequence[str]) -> int:
        """The texts' units together, counting each text's word pieces once per process."""
        with self._lock:
            known = {k: self._pieces[k] for k in keys if k in self._pieces}
        todo = [(k, t) for k, t in zip(keys, texts) if k not in known]
        if todo:
            counts, _ = text_units(encoder, [t for _, t in todo])
            fresh = dict(zip((k for k, _ in todo), counts))
            with self._lock:
                if len(self._pieces) + len(fresh) > PIECE_MEMO_LIMIT:
                    self._pieces.clear()
                self._pieces.update(fresh)
            known.update(fresh)
        return sum(known[k] for k in keys)


DEFAULT_RATES = EncodeRates()
"""The process's rates: every evaluation of a run (and of a bench) is charged at the same ones."""


class ColdEncodeMeter:
    """One evaluation's charge for the texts and images its program asked the host to encode,
    each distinct one once, at the cold rate, whatever the shared cache held."""

    def __init__(self, encoders: Any, rates: EncodeRates = DEFAULT_RATES) -> None:
        self.encoders = encoders
        self.rates = rates
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self.charged_ms = 0.0
        self.texts_charged = 0
        self.images_charged = 0
        self.rates_used: dict[str, float] = {}  # encoder -> ms per unit it was charged at

    def texts(self, texts: Sequence[str], *, tokens: bool = False) -> float:
        """Charge the texts not charged yet in this evaluation (`tokens`: token matrices, the same
        forward pass, charged apart from pooled vectors); returns the milliseconds charged."""
        encoder = self.encoders.text.encoder
        prefix = f"{self.encoders.text.name}{'/tokens' if tokens else ''}"
        fresh = self._fresh({content_key(prefix, t.encode("utf-8")): t for t in texts})
        if not fresh:
            return 0.0
        rate = self.rates.text_rate(encoder)
        ms = 0.0 if rate.ms_per_unit == 0 else rate.ms_per_unit * self.rates.units(encoder, list(fresh), list(fresh.values()))
        with self._lock:
            self.rates_used[rate.encoder] = rate.ms_per_unit
            self.charged_ms += ms
            self.texts_charged += len(fresh)
        return ms

    def images(self, keys: Sequence[str]) -> float:
        """Charge the images (by a key each, e.g. the store path) not charged yet."""
        fresh = self._fresh({f"image:{k}": k for k in keys})
        if not fresh:
            return 0.0
        rate = self.rates.image_rate(self.encoders.image.encoder)
        ms = rate.ms_per_unit * len(fresh)
        with self._lock:
            self.rates_used[rate.encoder] = rate.ms_per_unit
            self.charged_ms += ms
            self.images_charged += len(fresh)
        return ms

    def _fresh(self, by_key: dict[str, str]) -> dict[str, str]:
        with self._lock:
            fresh = {k: v for k, v in by_key.items() if k not in self._seen}
            self._seen.update(fresh)
        return fresh
