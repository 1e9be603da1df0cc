"""One resolution of a run's settings for every command: each value's source, one precedence
(flag > file > preset > benchmark > default) in `search`, `eval` and `config show`, the flag
table's spellings, and `exam` of a run with the run's own budget, limits and exam size."""

from __future__ import annotations

import json
import textwrap

import pytest

from automemo.cli import build_parser, main
from automemo.resolution import Layer, resolve
from automemo.paths import EXAMPLE_EPISODES_DIR

KEY = "budget.max_chars"


@pytest.fixture
def layered(tmp_path, monkeypatch):
    """A benchmark of one's own whose defaults set budget.max_chars, a preset and a file that
    set it too: the five layers of one key, each with its own value."""
    bench = tmp_path / "tight.py"
    bench.write_text(textwrap.dedent("""
        from automemo.benchmarks.minigallery.benchmark import MiniGallery

        class Tight(MiniGallery):
            @classmethod
            def search_defaults(cls, options):
                return {"budget": {"max_chars": 2000}}
    """))
    presets = tmp_path / "presets"
    presets.mkdir()
    (presets / "small.toml").write_text(f'[benchmark]\nname = "{bench}:Tight"\n')
    (presets / "smaller.toml").write_text(f'[benchmark]\nname = "{bench}:Tight"\n[budget]\nmax_chars = 3000\n')
    monkeypatch.setattr("automemo.config.PRESETS_DIR", presets)
    file = tmp_path / "run.toml"
    file.write_text("[budget]\nmax_chars = 4000\n")
    return {"bench": f"{bench}:Tight", "file": str(file)}


def _search(*argv):
    from automemo.cli.search_cmd import resolve_config

    return resolve_config(build_parser().parse_args(["search", *argv]))[1].budget.max_chars


def _eval(*argv):
    from automemo.cli.eval_cmd import resolve_config

    return resolve_config(build_parser().parse_args(["eval", "murag", *argv]), None)[0].budget.max_chars


def _shown(capsys, *argv) -> dict[str, dict]:
    assert main(["config", "show", "--json", *argv]) == 0
    return {row["key"]: row for row in json.loads(capsys.readouterr().out)}


@pytest.mark.parametrize("command", [_search, _eval])
def test_flag_beats_file_beats_preset_beats_benchmark_beats_default(command, layered, capsys):
    assert command("--benchmark", "minigallery") == 50_000  # default
    assert command("--preset", "small") == 2000  # the benchmark's own default
    assert command("--preset", "smaller") == 3000
    assert command("--preset", "smaller", "--config", layered["file"]) == 4000
    assert command("--preset", "smaller", "--config", layered["file"], "--max-chars", "5000") == 5000
    # config show agrees, naming each source
    sources = [("--benchmark", "minigallery"), ("--preset", "small"), ("--preset", "smaller"),
               ("--preset", "smaller", "--config", layered["file"]),
               ("--preset", "smaller", "--config", layered["file"], "--max-chars", "5000")]
    expected = ["default", f"benchmark {layered['bench']}", "preset smaller", f"file {layered['file']}",
                "flag --max-chars"]
    for argv, source in zip(sources, expected):
        assert _shown(capsys, *argv)[KEY]["source"] == source


def test_the_same_layers_resolve_alike_wherever_they_are_listed():
    # the layers' order is the precedence: a lower layer never wins over a higher one
    low, high = Layer("preset p", {"search": {"steps": 3}}), Layer("file f", {"search": {"steps": 9}})
    assert resolve([low, high]).value("search.steps") == 9
    assert resolve([high, low]).value("search.steps") == 3
    assert resolve([low, high]).source("search.steps") == "file f"


def test_config_show_prints_a_benchmark_override_with_its_source(capsys):
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in out.splitlines()[1:]}
    assert rows["search.kappa"] == ["0.0", "benchmark minigallery"]
    assert rows["search.seed_sweep"] == ["true", "benchmark minigallery"]
    assert rows["search.steps"] == ["20", "default"]
    assert rows["benchmark.options.mode"] == ['"retrieval"', "default"]
    # an agent benchmark declares none: the defaults stand
    rows = _shown(capsys, "--benchmark", "miniwob", "--steps", "4")
    assert rows["search.kappa"] == {"key": "search.kappa", "value": 0.5, "source": "default"}
    assert rows["search.steps"]["source"] == "flag --steps"
    assert rows["benchmark.name"]["source"] == "flag --benchmark"


def test_config_show_names_a_preset_and_keys_set_once_elsewhere(capsys):
    rows = _shown(capsys, "--preset", "miniwob", "--max-chars", "900", "--agent-model", "m")
    assert rows["evaluation.concurrency"]["source"] == "preset miniwob"
    assert rows["evaluation.budget.max_chars"] == {"key": "evaluation.budget.max_chars", "value": 900,
                                                   "source": "flag --max-chars (as budget.max_chars)"}
    assert rows["llm.judge.model"]["source"] == "flag --agent-model (the judge follows the agent)"
    assert main(["config", "show", "--changed", "--preset", "miniwob"]) == 0
    keys = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert "evaluation.concurrency" in keys and "search.steps" not in keys


def test_one_spelling_of_no_sandbox_and_the_old_ones_say_so(capsys):
    from automemo.cli.flags import unsafe_confirmed

    parser = build_parser()
    args = parser.parse_args(["search", "--sandbox", "unsafe"])
    assert unsafe_confirmed(args) and not capsys.readouterr().err
    for old in (["--unsafe-no-sandbox"], ["--sandbox", "none"]):
        args = parser.parse_args(["search", *old])
        assert unsafe_confirmed(args)
        assert "deprecated; say --sandbox unsafe" in capsys.readouterr().err
    help_text = parser._subparsers._group_actions[0].choices["search"].format_help()
    assert "--unsafe-no-sandbox" not in help_text and "{auto,docker,bwrap,unsafe}" in help_text


def test_every_command_takes_its_config_flags_from_the_one_table():
    from automemo.cli.flags import CONFIG_FLAGS

    commands = build_parser()._subparsers._group_actions[0].choices
    seen = 0
    for name in ("search", "eval", "exam", "serve"):
        parser = commands[name]
        for flag, action in parser._option_string_actions.items():
            if flag in CONFIG_FLAGS:  # defined by the table: its help names the key it sets
                assert action.help.endswith(f"[{CONFIG_FLAGS[flag].key}]"), (name, flag)
                seen += 1
        assert "--sandbox" in parser._option_string_actions
    assert seen > 20
    for flag in ("--max-chars", "--agent-model", "--judge-base-url"):  # one definition, one text
        assert commands["search"]._option_string_actions[flag].help == \
            commands["eval"]._option_string_actions[flag].help


def test_exam_of_a_run_uses_its_budget_limits_and_exam_size(tmp_path, capsys, monkeypatch):
    import shutil

    from searchtools import committed_root_run

    import automemo.exam
    from automemo.configtools import merge

    store = EXAMPLE_EPISODES_DIR
    run = committed_root_run(tmp_path)
    shutil.copytree(store / "episodes" / "update", run.store_root / "episodes" / "update")
    run.write_config(merge(run.config(), {
        "budget": {"max_chars": 1234, "max_images": 1},
        "sandbox": {"backend": "docker", "limits": {"retrieve_timeout_s": 7.0, "memory_mb": 300}},
        "search": {"exam_tasks": 2},
    }))
    seen = {}

    class Passed:
        passed = True

        def to_dict(self):
            return {"passed": True}

    def fake_exam(source, sandbox, episodes, partials, **kw):
        seen.update(kw, episodes=len(episodes), sandbox=sandbox.name)
        return Passed()

    monkeypatch.setattr(automemo.exam, "quick_exam", fake_exam)
    assert main(["exam", "no_memory", "--episodes", str(run.path), "--sandbox", "unsafe", "--json"]) == 0
    assert (seen["budget"].max_chars, seen["budget"].max_images) == (1234, 1)
    assert (seen["limits"].retrieve_timeout_s, seen["limits"].memory_mb) == (7.0, 300)
    assert seen["episodes"] == 2 and seen["sandbox"] == "unsafe"  # the run's backend is not this machine's
    # a flag still wins over the run's value
    assert main(["exam", "no_memory", "--episodes", str(run.path), "--sandbox", "unsafe", "--json",
                 "--max-chars", "99", "--exam-tasks", "1"]) == 0
    assert seen["budget"].max_chars == 99 and seen["episodes"] == 1
    assert seen["limits"].retrieve_timeout_s == 7.0
    capsys.readouterr()


def test_a_resumed_run_without_a_sandbox_is_confirmed_by_its_own_backend_only(tmp_path):
    from automemo.cli.search_cmd import resolve_config
    from automemo.config import run_config_to_dict
    from automemo.resolution import load_run_config
    from automemo.runs import RunDir

    config = load_run_config(overrides={"sandbox": {"backend": "unsafe"}, "search": {"steps": 3}})
    run = RunDir.create(tmp_path, run_config_to_dict(config), "r")
    parse = build_parser().parse_args
    from automemo.cli import UserError

    with pytest.raises(UserError, match="--sandbox unsafe on the command line"):
        resolve_config(parse(["search", "--resume", str(run.path)]))
    _, resumed = resolve_config(parse(["search", "--resume", str(run.path), "--sandbox", "unsafe"]))
    assert resumed == config
    with pytest.raises(UserError, match="drop --sandbox"):
        resolve_config(parse(["search", "--resume", str(run.path), "--sandbox", "docker"]))


def test_the_judge_follows_the_agent_unless_it_has_its_own(tmp_path):
    exported = Layer("the export", {"llm": {"agent": {"model": ""}, "judge": {"model": "", "base_url": ""}}})
    flags = Layer("flag", {"llm": {"agent": {"model": "a", "base_url": "http://a/v1"}}},
                  {"llm.agent.model": "flag --agent-model"})
    resolution = resolve([exported, flags])
    assert (resolution.config.llm.judge.model, resolution.config.llm.judge.base_url) == ("a", "http://a/v1")
    assert resolution.source("llm.judge.model") == "flag --agent-model (the judge follows the agent)"
    own = Layer("file f", {"llm": {"judge": {"model": "j"}}})
    assert resolve([exported, own, flags]).config.llm.judge.model == "j"
