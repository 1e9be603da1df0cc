"""Where the project's non-Python assets live: prompts, seeds and the sandbox image definition.

They sit at the repository root so that people can read and edit them without digging into the
package. A checkout (the editable install) reads them there; a wheel has no repository root, so
its build (setup.py) copies the same folders into the package as `automemo/_assets/`, which is
looked for first. `AUTOMEMO_HOME` points elsewhere for unusual layouts.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
_BUNDLED = PACKAGE_DIR / "_assets"
ASSETS_DIR = Path(os.environ.get("AUTOMEMO_HOME")
                  or (_BUNDLED if _BUNDLED.is_dir() else PACKAGE_DIR.parent)).resolve()
PROMPTS_DIR = ASSETS_DIR / "prompts"
SEEDS_DIR = ASSETS_DIR / "seeds"
SANDBOX_DIR = ASSETS_DIR / "sandbox"
# Data sets shipped inside the package (package data, in the wheel too), named `@<folder>` where a
# benchmark option takes a path: `@mem-gallery-sample` is ten real Mem-Gallery scenarios (MIT;
# their LICENSE and SOURCE.txt say where they come from).
SHIPPED_DATA_DIR = PACKAGE_DIR / "data"
CACHE_DIR = Path(os.environ.get("AUTOMEMO_CACHE", Path.home() / ".cache" / "automemo"))


def list_seeds(folder: str | Path = SEEDS_DIR) -> list[Path]:
    """The seed programs of `folder`, by name (`_`-prefixed helper files are not seeds)."""
    return sorted(p for p in Path(folder).glob("*.py") if not p.name.startswith("_"))


def seed_path(name: str) -> Path:
    """Path of a seed program by name (`no_memory`) or file name (`no_memory.py`)."""
    path = SEEDS_DIR / (name if name.endswith(".py") else f"{name}.py")
    if not path.exists():
        known = [p.stem for p in list_seeds()]
        raise FileNotFoundError(f"no seed named {name!r} in {SEEDS_DIR}; seeds: {', '.join(known)}")
    return path


def file_in_the_way(folder: Path) -> Path | None:
    """The file that stops `folder` from being created: `folder` itself, or the nearest of its
    parents that exists, when that is not a directory. None when `folder` can be made."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    return existing if existing is not None and not existing.is_dir() else None


def shipped_data(path: str) -> str:
    """`path`, or for `@<name>` the shipped data set of that name (`automemo/data/<name>`)."""
    if not path.startswith("@"):
        return path
    target = SHIPPED_DATA_DIR / path[1:]
    if not path[1:] or "/" in path[1:] or not target.is_dir():
        known = sorted(f"@{p.name}" for p in SHIPPED_DATA_DIR.iterdir() if p.is_dir()) if SHIPPED_DATA_DIR.is_dir() else []
        raise FileNotFoundError(f"no shipped data set {path!r}; shipped: {', '.join(known) or 'none'}")
    return str(target)
