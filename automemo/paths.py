"""Where the project's non-Python assets live: prompts, seeds, the sandbox image definition.

They sit at the repository root (DESIGN §1) so that people can read and edit them without
digging into the package; the package is installed editable (`pip install -e .`), so they are
found next to it. `AUTOMEMO_HOME` points elsewhere for unusual layouts.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = Path(os.environ.get("AUTOMEMO_HOME", PACKAGE_DIR.parent)).resolve()
PROMPTS_DIR = PROJECT_DIR / "prompts"
SEEDS_DIR = PROJECT_DIR / "seeds"
SANDBOX_DIR = PROJECT_DIR / "sandbox"
CACHE_DIR = Path(os.environ.get("AUTOMEMO_CACHE", Path.home() / ".cache" / "automemo"))


def seed_path(name: str) -> Path:
    """Path of a seed program by name (`no_memory`) or file name (`no_memory.py`)."""
    path = SEEDS_DIR / (name if name.endswith(".py") else f"{name}.py")
    if not path.exists():
        known = sorted(p.stem for p in SEEDS_DIR.glob("*.py") if not p.name.startswith("_"))
        raise FileNotFoundError(f"no seed named {name!r} in {SEEDS_DIR}; seeds: {', '.join(known)}")
    return path
