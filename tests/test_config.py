"""RunConfig: presets, the fully commented default.toml, layering and fail-fast errors, and how
`automemo search` turns flags into config."""

from __future__ import annotations

import dataclasses
import re

import pytest

from automemo.cli import UserError, build_parser
from automemo.cli.search_cmd import resolve_config
from automemo.config import DERIVED_KEYS, PRESETS_DIR, RunConfig, build_run_config, read_toml, run_config_to_dict
from automemo.resolution import load_run_config
from automemo.configtools import ConfigError


def _keys(obj, prefix=""):
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            yield from _keys(value, f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}"


def test_default_toml_is_exactly_the_defaults_and_lists_every_key():
    assert build_run_config(read_toml(PRESETS_DIR / "default.toml")) == RunConfig()
    # asked for as a preset, it is the default layer itself: a benchmark's defaults still apply
    assert load_run_config("default") == load_run_config()
    text = (PRESETS_DIR / "default.toml").read_text()
    for key in _keys(RunConfig()):
        if key.split(".")[:2] in [k.split(".") for k in DERIVED_KEYS]:
            continue  # set once, in [budget] / [sandbox.limits] / search.exam_tasks
        leaf = key.rsplit(".", 1)[-1]
        assert re.search(rf"^#? ?{leaf} =", text, re.M), f"default.toml does not list {key}"


def test_old_config_json_with_exam_sample_size_still_loads():
    config = build_run_config({"evaluation": {"exam_sample_size": 5}, "search": {"exam_tasks": 5}})
    assert config.evaluation.exam_tasks == 5 == config.search.exam_tasks


def _benchmark_notes() -> dict[str, list[str]]:
    """default.toml's "# benchmark default: ..." lines, by the key whose comment holds them."""
    notes: dict[str, list[str]] = {}
    section, pending = "", []
    for line in (PRESETS_DIR / "default.toml").read_text().splitlines():
        if line.startswith("["):
            section, pending = line.strip("[]"), []
        elif line.startswith("# benchmark default:"):
            pending.append(line)
        elif re.match(r"^#? ?\w+ =", line):
            key = f"{section}.{line.lstrip('# ').split(' =')[0]}"
            if pending:
                notes[key] = pending
            pending = []
        elif not line.startswith("#"):
            pending = []
    return notes


def test_default_toml_names_every_key_a_benchmark_overrides():
    from automemo.resolution import benchmark_overrides

    expected = {key: [f"# benchmark default: {value} on {', '.join(names)}" for value, names in by_value.items()]
                for key, by_value in benchmark_overrides().items()}
    assert expected["search.kappa"] == [
        "# benchmark default: 0.0 on conversations, locomo, longmemeval, memgallery, minigallery"]
    assert _benchmark_notes() == expected


@pytest.mark.parametrize("preset", ["minigallery", "miniwob", "memgallery-sample", "longmemeval", "default"])
def test_presets_load(preset):
    config = load_run_config(preset)
    assert config.search.steps == 20
    assert build_run_config(run_config_to_dict(config)) == config  # config.json round-trips


def _without(data, key):
    """A nested mapping with the dotted `key` taken out."""
    head, _, rest = key.partition(".")
    if not rest:
        return {k: v for k, v in data.items() if k != head}
    return {**data, head: _without(data[head], rest)}


@pytest.mark.parametrize("preset", ["minigallery", "miniwob", "memgallery-sample", "longmemeval"])
def test_presets_do_not_repeat_a_default_or_their_benchmarks_defaults(preset):
    from automemo.resolution import Layer, preset_layer, resolve

    layer = preset_layer(preset)
    given = resolve([layer])
    for setting in given.settings:
        if setting.source != f"preset {preset}" or setting.key.startswith("benchmark."):
            continue  # the benchmark and its options are what a preset is for
        without = resolve([Layer("rest", _without(layer.data, setting.key))])
        assert without.value(setting.key) != setting.value, \
            f"preset {preset} repeats {setting.key} = {setting.value} ({without.source(setting.key)})"


def test_minigallery_preset_runs_offline():
    config = load_run_config("minigallery")
    assert config.benchmark.options["mode"] == "retrieval"
    assert not config.llm.meta.model and not config.llm.agent.model  # parameter mutator, no agent
    assert config.sandbox.backend != "unsafe" and config.embeddings.text == "minilm"


def test_layers_and_unknown_keys(tmp_path):
    user = tmp_path / "c.toml"
    user.write_text('[search]\nsteps = 7\nc_e = 0.3\n[benchmark]\noptions = { seed = 4 }\n')
    config = load_run_config("minigallery", user, {"search": {"steps": 9}})
    assert (config.search.steps, config.search.c_e) == (9, 0.3)
    # tables merge key by key: the preset's mode survives the file's seed
    assert config.benchmark.options == {"mode": "retrieval", "seed": 4}
    user.write_text("[search]\nc_ee = 1\n")
    with pytest.raises(ConfigError, match="search.c_ee"):
        load_run_config(None, user)
    user.write_text("[search\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_run_config(None, user)
    with pytest.raises(ConfigError, match="presets: "):
        load_run_config("nope")
    with pytest.raises(ConfigError, match="search.alpha must be > 0"):
        load_run_config(overrides={"search": {"alpha": 0}})


def test_budget_limits_and_exam_size_are_set_once():
    config = load_run_config(overrides={"budget": {"max_chars": 900}, "search": {"exam_tasks": 3}})
    assert config.evaluation.budget.max_chars == 900 and config.evaluation.exam_tasks == 3
    with pytest.raises(ConfigError, match=r"evaluation.budget differs from \[budget\]"):
        load_run_config(overrides={"evaluation": {"budget": {"max_chars": 5}}})


def _args(*argv):
    return build_parser().parse_args(["search", *argv])


def test_flags_override_and_never_store_a_secret(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    run, config = resolve_config(_args("--preset", "minigallery", "--steps", "4", "--seed", "11",
                                       "--meta-model", "gpt-4o", "--meta-base-url", "http://x/v1",
                                       "--max-usd", "1.5", "--max-tokens", "100", "--sandbox", "bwrap"))
    assert run is None
    assert (config.search.steps, config.search.seed, config.llm.meta.model) == (4, 11, "gpt-4o")
    assert (config.llm.max_usd, config.llm.max_total_tokens, config.sandbox.backend) == (1.5, 100, "bwrap")
    assert "sk-secret-value" not in repr(run_config_to_dict(config))
    assert run_config_to_dict(config)["llm"]["meta"]["api_key_env"] == "OPENAI_API_KEY"


def test_a_usd_cap_on_an_unpriced_model_is_refused_before_the_run(tmp_path):
    with pytest.raises(UserError, match=r"none for 'qwen-local' \(llm.meta\).*\[llm.prices\]"):
        resolve_config(_args("--meta-model", "qwen-local", "--max-usd", "2", "--runs-dir", str(tmp_path)))
    assert not any(tmp_path.iterdir()), "no run directory was made"
    _, config = resolve_config(_args("--meta-model", "qwen-local", "--max-tokens", "1000"))
    assert config.llm.max_total_tokens == 1000  # a token cap needs no price
    priced = tmp_path / "p.toml"
    priced.write_text('[llm.prices]\n"qwen-local" = [0.0, 0.0]\n')
    _, config = resolve_config(_args("--config", str(priced), "--meta-model", "qwen-local", "--max-usd", "2"))
    assert config.llm.max_usd == 2


def test_search_takes_the_endpoint_option_and_ray_flags_of_eval():
    from automemo.cli import build_parser

    parser = build_parser()
    search = parser._subparsers._group_actions[0].choices["search"]
    evaluate = parser._subparsers._group_actions[0].choices["eval"]
    shared = ("--agent-base-url", "--judge-model", "--judge-base-url", "--option", "--ray-address")
    for flag in shared:  # one definition: the same help in both commands
        assert search._option_string_actions[flag].help == evaluate._option_string_actions[flag].help
    _, config = resolve_config(_args(
        "--agent-model", "a", "--agent-base-url", "http://agent/v1", "--judge-model", "j",
        "--option", "users_per_split=3", "--option", "mode=retrieval", "--ray-address", "ray://h:10001"))
    assert (config.llm.agent.base_url, config.llm.judge.model) == ("http://agent/v1", "j")
    assert config.llm.judge.base_url == "http://agent/v1", "the judge answers on the agent's endpoint"
    assert config.benchmark.options["users_per_split"] == 3
    assert config.evaluation.ray.address == "ray://h:10001"


def test_unsafe_needs_the_explicit_flag(tmp_path):
    _, config = resolve_config(_args("--sandbox", "unsafe"))
    assert config.sandbox.backend == "unsafe"
    unsafe = tmp_path / "u.toml"
    unsafe.write_text('[sandbox]\nbackend = "unsafe"\n')
    with pytest.raises(UserError, match="--sandbox unsafe"):
        resolve_config(_args("--config", str(unsafe)))
    with pytest.raises(UserError, match="contradict"):
        resolve_config(_args("--unsafe-no-sandbox", "--sandbox", "docker"))
    with pytest.raises(UserError, match="bad configuration: .*search.steps must be >= 0|--steps must be >= 0"):
        resolve_config(_args("--steps", "-1"))


def test_resume_takes_the_config_of_the_run(tmp_path):
    from automemo.runs import RunDir

    config = load_run_config("minigallery", None, {"search": {"steps": 3}})
    run = RunDir.create(tmp_path, run_config_to_dict(config), "r")
    resumed_run, resumed = resolve_config(_args("--resume", str(run.path)))
    assert resumed_run.path == run.path and resumed == config
    with pytest.raises(UserError, match="drop --seed"):
        resolve_config(_args("--resume", str(run.path), "--seed", "5"))
    with pytest.raises(UserError, match="drop --benchmark"):
        resolve_config(_args("--resume", str(run.path), "--benchmark", "miniwob", "--steps", "5"))
    with pytest.raises(UserError, match="not a run directory"):
        resolve_config(_args("--resume", str(tmp_path)))


def test_resume_may_extend_the_budget_and_the_run_remembers_it(tmp_path):
    """A run stopped at its step budget or a spent cap continues with a larger one; the extension
    is written into the run's config so that a later plain --resume keeps it."""
    from automemo.runs import RunDir

    config = load_run_config("minigallery", None, {"search": {"steps": 3}, "llm": {"max_usd": 1.0}})
    run = RunDir.create(tmp_path, run_config_to_dict(config), "r")
    _, extended = resolve_config(_args("--resume", str(run.path), "--steps", "8", "--max-usd", "2.5"))
    assert extended.search.steps == 8 and extended.llm.max_usd == 2.5
    assert extended.search.seed == config.search.seed and extended.benchmark == config.benchmark
    _, again = resolve_config(_args("--resume", str(run.path)))
    assert again == extended


def _run_with_steps(tmp_path, steps: int, done: int):
    from automemo.runs import RunDir
    from automemo.runs.journal import StepJournal
    from automemo.runs.records import ActionRecord, Outcome

    config = load_run_config("minigallery", None, {"search": {"steps": steps}})
    run = RunDir.create(tmp_path, run_config_to_dict(config), "r")
    for step in range(done + 1):  # step 0 is the root's evaluation
        kind = "evaluate_root" if step == 0 else "evaluate"
        StepJournal(run, step).commit(ActionRecord(step=step, kind=kind, node_id=0, outcome=Outcome.EVALUATED))
    return run


def test_resume_steps_at_or_below_what_is_done_is_refused_not_ignored(tmp_path):
    run = _run_with_steps(tmp_path, steps=3, done=3)
    for steps in ("2", "3"):
        with pytest.raises(UserError, match=r"done 3 step\(s\) already.*new total.*--steps 13"):
            resolve_config(_args("--resume", str(run.path), "--steps", steps))
    _, extended = resolve_config(_args("--resume", str(run.path), "--steps", "4"))
    assert extended.search.steps == 4
    with pytest.raises(UserError, match="drop --runs-dir"):
        resolve_config(_args("--resume", str(run.path), "--runs-dir", str(tmp_path / "elsewhere")))


def test_resume_prints_what_is_done_and_the_new_total(tmp_path, capsys, monkeypatch):
    from automemo.cli import main
    from automemo.cli import search_cmd

    run = _run_with_steps(tmp_path, steps=3, done=3)
    monkeypatch.setattr(search_cmd, "_build", lambda *a: (_ for _ in ()).throw(SystemExit(7)))
    with pytest.raises(SystemExit):
        main(["search", "--resume", str(run.path), "--steps", "5"])
    assert "resuming: 3 step(s) done of 5" in capsys.readouterr().out


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--benchmark", "nosuchbench"], "unknown benchmark 'nosuchbench'"),
        (["--run-id", "../escape"], "--run-id '../escape' must be a plain folder name"),
        (["--runs-dir", "{file}/sub"], "is a file, not a folder; pass a folder"),
        (["--runs-dir", "{file}"], "is a file, not a folder; pass a folder"),
    ],
)
def test_bad_search_places_and_benchmarks_fail_before_anything_is_created(tmp_path, capsys, monkeypatch, flags, message):
    from automemo.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    flags = [f.replace("{file}", str(tmp_path / "afile")) for f in flags]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["search", "--preset", "minigallery", "--sandbox", "unsafe", *flags]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and "Traceback" not in captured.err
    assert "run directory" not in captured.out
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no runs/, no ../escape
    assert not (tmp_path.parent / "escape").exists()


def test_the_seed_sweep_comes_with_retrieval_benchmarks_and_a_flag_turns_it_off():
    _, config = resolve_config(_args("--preset", "minigallery"))
    assert config.search.seed_sweep  # Mini-Gallery's retrieval mode declares it
    _, config = resolve_config(_args("--preset", "minigallery", "--no-seed-sweep"))
    assert not config.search.seed_sweep
    _, config = resolve_config(_args("--benchmark", "miniwob"))
    assert not config.search.seed_sweep  # an agent benchmark: off unless asked
    _, config = resolve_config(_args("--benchmark", "miniwob", "--seed-sweep"))
    assert config.search.seed_sweep


def test_config_show_lists_the_serve_defaults_from_their_one_place(capsys):
    import json

    from automemo.cli import main
    from automemo.serve import defaults

    assert main(["config", "show", "--json"]) == 0
    shown = {s["key"]: s for s in json.loads(capsys.readouterr().out)}
    assert shown["serve.max_open_namespaces"] == {"key": "serve.max_open_namespaces",
                                                  "value": defaults.MAX_OPEN_NAMESPACES, "source": "default"}
    assert shown["serve.default_user"]["value"] == defaults.DEFAULT_USER
