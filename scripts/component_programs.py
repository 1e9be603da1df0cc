"""Writes the programs of docs/memolib.md's component table: a fixed simple baseline recipe
(BM25 + dense over turns, reciprocal-rank fusion, 10 units: the hybrid_rag seed as a recipe)
and the same recipe with one of memolib's retrieval components switched on.

    PYTHONPATH=. python3 scripts/component_programs.py OUT_DIR   (from the repository root)

Each `OUT_DIR/<name>.py` is a plain rendered recipe (`automemo.meta.source.recipe.render_recipe`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from automemo.meta.source.recipe import Recipe, render_recipe, with_values

BASELINE = Recipe()
COMPONENTS = {
    "baseline": {},
    "late": {"late": True},
    "entities": {"entities": True},
    "temporal": {"temporal": True},
    "hierarchy": {"sessions": 2},
    "feedback": {"feedback": True},
    "speakers": {"speakers": True},
}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, changes in COMPONENTS.items():
        (out / f"{name}.py").write_text(render_recipe(with_values(BASELINE, changes)))
        print(out / f"{name}.py")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "components"))
