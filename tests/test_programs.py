"""Naming a memo program (automemo/programs.py): `discovered`, a seed, a file, an export folder;
what each is (a type), its provenance header, and the refusals a user reads."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from automemo.paths import SEEDS_DIR
from automemo.programs import (DISCOVERED, ProgramKind, ProgramNotFound, defines_memo, discovered_path,
                               provenance_header, read_provenance, resolve_program)
from automemo.search.sweep import sweep_order


def test_discovered_is_a_program_of_its_own_kind_not_a_hand_design():
    program = resolve_program("discovered")
    assert program.kind is ProgramKind.DISCOVERED
    assert program.path == discovered_path()
    assert not (SEEDS_DIR / "discovered.py").exists()  # never among the hand designs
    assert defines_memo(program.source) == ""


def test_seeds_files_and_exports_resolve(tmp_path):
    seed = resolve_program("bm25_rag.py")
    assert (seed.kind, seed.name) == (ProgramKind.SEED, "bm25_rag")
    file = tmp_path / "mine.py"
    file.write_text((SEEDS_DIR / "bm25_rag.py").read_text())
    assert resolve_program(str(file)).kind is ProgramKind.FILE
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "program.py").write_text(file.read_text())
    (folder / "manifest.json").write_text(json.dumps({"format": "automemo-export/1"}))
    exported = resolve_program(str(folder))
    assert exported.kind is ProgramKind.EXPORT and exported.manifest["format"] == "automemo-export/1"


def test_a_name_that_names_nothing_lists_what_may_be_named(tmp_path):
    with pytest.raises(ProgramNotFound, match="names: discovered, .*bm25_rag"):
        resolve_program("bm26_rag")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProgramNotFound, match="folder without program.py"):
        resolve_program(str(tmp_path / "empty"))


def test_defines_memo_says_why_not():
    assert "no class Memo" in defines_memo("x = 1\n")
    assert "does not parse" in defines_memo("class Memo(:\n")


def test_the_provenance_header_round_trips():
    block = provenance_header({"data": "@mem-gallery-sample", "test": 0.8812, "chosen": {"node": 16}})
    source = "# a program\n" + block + "\nclass Memo: pass\n"
    assert read_provenance(source) == {"data": "@mem-gallery-sample", "test": 0.8812, "chosen": {"node": 16}}
    assert read_provenance("class Memo: pass\n") == {}


def test_the_sweep_carries_the_discovered_default_last_unless_it_is_the_root():
    order = sweep_order(SEEDS_DIR, "no_memory")
    assert order[-1] == DISCOVERED and "no_memory" not in order
    assert DISCOVERED not in sweep_order(SEEDS_DIR, DISCOVERED)
    assert DISCOVERED not in sweep_order(SEEDS_DIR, "no_memory", discovered=False)


def _automemo(*args, cwd):
    return subprocess.run([sys.executable, "-m", "automemo", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_search_refuses_a_root_that_is_no_program_before_any_run_exists(tmp_path):
    runs = tmp_path / "runs"
    bad = _automemo("search", "--preset", "memgallery-sample", "--root", "nosuch", "--runs-dir", str(runs),
                    cwd=tmp_path)
    assert bad.returncode == 2 and "no memo program named 'nosuch'" in bad.stderr and "discovered" in bad.stderr
    (tmp_path / "nomemo.py").write_text("x = 1\n")
    bad = _automemo("search", "--preset", "memgallery-sample", "--root", str(tmp_path / "nomemo.py"),
                    "--runs-dir", str(runs), cwd=tmp_path)
    assert bad.returncode == 2 and "defines no class Memo" in bad.stderr
    assert not runs.exists()


def test_export_writes_the_discovered_default_with_its_provenance(tmp_path):
    from automemo.deploy import read_manifest

    done = _automemo("export", "discovered", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    manifest = read_manifest(tmp_path / "out")  # hashes checked, as serve and load_memory check them
    assert manifest["node"]["action"] == "discovered" and manifest["node"]["summary"] == "discovered default"
    assert manifest["provenance"] == read_provenance(discovered_path().read_text())
    assert (tmp_path / "out" / "program.py").read_text() == discovered_path().read_text()


def test_serve_exports_a_named_program_next_to_its_state(tmp_path):
    from automemo.cli import UserError
    from automemo.cli.serve_cmd import _export_named
    from automemo.deploy import read_manifest

    folder = _export_named(Path("discovered"), tmp_path / "discovered-state")
    assert folder == tmp_path / "discovered-state-program"
    assert read_manifest(folder)["node"]["action"] == "discovered"
    with pytest.raises(UserError, match="no exported folder, and no memo program named 'nosuch'"):
        _export_named(Path("nosuch"), tmp_path / "x-state")


def test_a_report_says_a_swept_discovered_default_is_no_hand_design():
    from automemo.report.node_page import transplant_of

    diagnosis = {"diagnosis": {"mutation": {"kind": "transplant", "seed": "discovered", "sweep": True}}}
    found = transplant_of(diagnosis)
    assert found.discovered and found.seed_path == ""
    seed = transplant_of({"diagnosis": {"mutation": {"kind": "transplant", "seed": "murag", "sweep": True}}})
    assert not seed.discovered and seed.seed_path == "seeds/murag.py"
