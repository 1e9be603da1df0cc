"""Naming a memo program: the one resolution every command that takes a program uses (`eval`,
`exam`, `export --program`, `serve`, `search --root`, `bench transfer`, `bench adapt --program`).

A program is named by

    discovered        the discovered default: the program the package's own search found on the
                      labelled questions of the data it embeds (discovered/discovered.py; its
                      provenance is in its header). Not a hand design: it is never in seeds/
    a seed name       a hand design under seeds/ (`hybrid_rag`, `bm25_rag.py`)
    a file            any memo program file
    an export folder  a folder written by `automemo export` (its program.py)

The kind is a type (`ProgramKind`), so a table, a tree or a verdict says "discovered" or "hand
design" from what the program is, never from the shape of its name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Mapping

from automemo.errors import DataError
from automemo.paths import DISCOVERED_DIR, SEEDS_DIR, list_seeds

DISCOVERED = "discovered"
"""The name of the discovered default wherever a program is named."""

PROVENANCE_START = "# --- provenance ---"
PROVENANCE_END = "# --- end of provenance ---"


class ProgramKind(str, Enum):
    SEED = "hand design"          # a seed under seeds/
    DISCOVERED = "discovered"     # the discovered default
    FILE = "file"                 # a program file the user named
    EXPORT = "export"             # a folder written by `automemo export`


class ProgramNotFound(DataError, FileNotFoundError):
    """A name that names no program; the message lists what may be named instead."""


@dataclass(frozen=True)
class NamedProgram:
    source: str
    name: str                     # short name for tables and work folders
    kind: ProgramKind
    path: Path                    # the program file
    manifest: Mapping[str, Any] | None = field(default=None, compare=False)  # an export's, unchecked


def discovered_path() -> Path:
    return DISCOVERED_DIR / f"{DISCOVERED}.py"


def known_names(seeds_dir: Path = SEEDS_DIR) -> list[str]:
    return [DISCOVERED, *(p.stem for p in list_seeds(seeds_dir))]


def resolve_program(spec: str | Path, seeds_dir: Path = SEEDS_DIR) -> NamedProgram:
    """The program `spec` names (see the module docstring), or `ProgramNotFound` saying what may
    be passed instead. A bare name (`discovered`, `bm25_rag.py`) is a program's name first, so a
    folder of that name in the working directory (a checkout's discovered/) does not shadow it;
    `./discovered` is the path."""
    text = str(spec)
    name = text.removesuffix(".py")
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name in known_names(seeds_dir):
        return _named(name, seeds_dir)
    path = Path(text)
    if path.is_dir():
        program = path / "program.py"
        if not program.is_file():
            raise ProgramNotFound(f"{text} is a folder without program.py; pass a memo program file, a seed name, "
                                  f"{DISCOVERED!r}, or a folder written by `automemo export`")
        manifest = _manifest(path / "manifest.json")
        kind = ProgramKind.EXPORT if manifest is not None else ProgramKind.FILE
        return NamedProgram(program.read_text(), path.resolve().name, kind, program.resolve(), manifest)
    if path.is_file():
        return NamedProgram(path.read_text(), path.stem, ProgramKind.FILE, path.resolve())
    if name == DISCOVERED:
        return _named(name, seeds_dir)
    if "/" in text or text.endswith(".py"):  # meant as a path
        raise ProgramNotFound(f"no memo program at {text}: the file does not exist; pass a memo program file, a seed "
                              f"name, {DISCOVERED!r}, or a folder written by `automemo export`")
    raise ProgramNotFound(f"no memo program named {text!r}: it is no file or folder, and no program is named so; "
                          f"names: {', '.join(known_names(seeds_dir))}")


def defines_memo(source: str) -> str:
    """Why `source` is no memo program ("" when it defines a class Memo): checked before a search
    starts from it, so a wrong file is refused before any step."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"the program does not parse (line {exc.lineno}: {exc.msg})"
    if not any(isinstance(node, ast.ClassDef) and node.name == "Memo" for node in tree.body):
        return "the program defines no class Memo"
    return ""


def _named(name: str, seeds_dir: Path) -> NamedProgram:
    if name == DISCOVERED:
        where = discovered_path()
        if not where.is_file():
            raise ProgramNotFound(f"the discovered default is missing from this installation ({where}); "
                                  f"`automemo bench discovered-default --out {where}` writes it again")
        return NamedProgram(where.read_text(), DISCOVERED, ProgramKind.DISCOVERED, where)
    seed = seeds_dir / f"{name}.py"
    return NamedProgram(seed.read_text(), name, ProgramKind.SEED, seed)


def read_provenance(source: str) -> dict[str, Any]:
    """The provenance block of a program's header: `# key: value` lines between
    PROVENANCE_START and PROVENANCE_END, each value JSON where it parses (numbers, objects)."""
    lines = source.splitlines()
    try:
        start = lines.index(PROVENANCE_START)
        end = lines.index(PROVENANCE_END, start)
    except ValueError:
        return {}
    out: dict[str, Any] = {}
    for line in lines[start + 1:end]:
        key, sep, value = line.removeprefix("#").strip().partition(":")
        if not sep:
            continue
        value = value.strip()
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def provenance_header(provenance: Mapping[str, Any]) -> str:
    """The block `read_provenance` reads back: one `# key: value` line a key, JSON values."""
    rows = [f"# {key}: {json.dumps(value, sort_keys=True)}" for key, value in provenance.items()]
    return "\n".join([PROVENANCE_START, *rows, PROVENANCE_END]) + "\n"


def _manifest(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise ProgramNotFound(f"{path} is not JSON ({exc}); export the program again") from None
    return data if isinstance(data, dict) else None
