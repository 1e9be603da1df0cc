"""`automemo bench longmemeval-m` on a tiny M-shaped file: it writes the file, evaluates the
program once, and prints every figure with the command that repeats the evaluation."""

from __future__ import annotations

import json
import re

from automemo.cli import main


def test_the_bench_prints_each_figure_and_its_command(tmp_path, capsys):
    code = main(["bench", "longmemeval-m", "--questions", "6", "--sessions-per-question", "5", "--pool", "8",
                 "--turns", "2", "--program", "bm25_rag", "--sandbox", "unsafe", "--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    [path] = tmp_path.glob("synthetic_m_6x5.json")
    items = json.loads(path.read_text())
    distinct = len({sid for item in items for sid in item["haystack_session_ids"]})
    assert f"| file: haystack sessions read / distinct, each parsed once | 30 / {distinct} |" in out
    assert re.search(r"python3 -m automemo eval \S+bm25_rag\.py --preset longmemeval --option path=\S+"
                     r"synthetic_m_6x5\.json --split test --sandbox unsafe", out)
    for figure in ("wall-clock", "host CPU", "host peak RSS", "largest guest's peak RSS",
                   "turns fed / distinct turn texts", "texts the encoder computed"):
        assert any(line.startswith("| ") and figure in line for line in out.splitlines())
    fed = int(re.search(r"sessions fed to the program \(one memory per question\) \| (\d+)", out).group(1))
    assert fed and fed % 5 == 0  # whole haystacks of 5 sessions
