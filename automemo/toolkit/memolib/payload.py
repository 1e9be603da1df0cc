"""The payload: the run's budget, sections fitted into it in priority order, ranked citations."""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from automemo.contract import Budget, ImageRef, MemoryPayload, PartialRecorder
from automemo.toolkit.memolib.text import dedupe
from automemo.toolkit.memolib.units import Unit

MAX_EVIDENCE = 10
"""Mini-Gallery scores Recall/nDCG@10: citing more ids than this is never rewarded."""


def budget_of(task: PartialRecorder) -> Budget:
    """The run's budget when the harness passes it in `task.metadata["budget"]`, else the paper's
    (50,000 chars, 2 images)."""
    raw = task.metadata.get("budget")
    if isinstance(raw, Mapping):
        try:
            return Budget(
                max_chars=int(raw.get("max_chars", Budget.max_chars)),
                max_images=int(raw.get("max_images", Budget.max_images)),
            )
        except (TypeError, ValueError):
            pass  # a malformed budget must not break retrieval: fall back to the defaults
    return Budget()


def fit_sections(sections: Sequence[str], max_chars: int, separator: str = "\n\n") -> str:
    """Join sections in priority order, stopping before the budget; the first section that does
    not fit whole is cut at a line boundary so that the most important content always survives."""
    out, used = [], 0
    for section in sections:
        if not section:
            continue
        cost = len(section) + (len(separator) if out else 0)
        if used + cost <= max_chars:
            out.append(section)
            used += cost
            continue
        room = max_chars - used - (len(separator) if out else 0)
        if room > 40:
            cut = section[:room]
            cut = cut[: cut.rfind("\n")] if "\n" in cut[room // 2 :] else cut[: room - 1] + "…"
            out.append(cut)
        break
    return separator.join(out)


def make_payload(
    sections: Sequence[str],
    *,
    budget: Budget,
    images: Sequence[ImageRef] = (),
    evidence: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> MemoryPayload:
    """A payload inside `budget`: images deduplicated and capped, evidence ranked, deduplicated and
    capped at `MAX_EVIDENCE`, text cut to what the metadata leaves of `max_chars`."""
    meta: dict[str, Any] = dict(extra or {})
    cited = dedupe(str(e) for e in evidence)[:MAX_EVIDENCE]
    if cited:
        meta["evidence"] = cited
    meta_chars = len(json.dumps(meta, ensure_ascii=False, sort_keys=True)) if meta else 0
    if meta_chars > budget.max_chars:
        meta, meta_chars = {}, 0
    text = fit_sections(sections, budget.max_chars - meta_chars)
    chosen = dedupe(images, key=lambda i: i.sha256)[: budget.max_images]
    return MemoryPayload(text=text, images=tuple(chosen), metadata=meta)


def citations(units: Sequence[Unit | Sequence[str]]) -> list[str]:
    """The evidence ids of ranked units (or of their id lists, own id first), best first: every
    unit's own id (a round's ref, a web step's) in rank order, then the further ids they carry
    (the pictures a round showed), in the same order. A picture's id stands for the round that showed it (Mem-Gallery's and LoCoMo's
    scorers count a cited image id as its turn), so cited right after its round it retrieves
    nothing new and takes one of the `MAX_EVIDENCE` places: interleaved, ten units of which
    three showed a picture cite only the first seven units' rounds."""
    ids = [u.evidence if isinstance(u, Unit) else (u,) if isinstance(u, str) else tuple(u) for u in units]
    return [*(i[0] for i in ids if i), *(e for i in ids for e in i[1:])]


def chronological(ranked: Sequence[tuple[Unit, int]], title: str = "Relevant memories (chronological):") -> str:
    """Retrieved units, each with the update order of its episode, shown in time order (episode,
    then position) under `title`, each line tagged `[session N, time | cited ids]`; a unit
    retrieved twice is shown once. The ranking itself goes into the citations (`make_payload`)."""
    rows = dedupe(sorted(ranked, key=lambda r: (r[1], r[0].position)), key=lambda r: (r[1], r[0].position, r[0].evidence))
    lines = [f"[session {order + 1}{', ' + unit.time if unit.time else ''} | {', '.join(unit.evidence)}] {unit.text}"
             for unit, order in rows]
    return title + "\n" + "\n".join(lines)
