"""`automemo search`: run (or resume) a budget-aware tree search for a memo program.

Configuration is layered, key by key: flag > TOML file (`--config FILE`, every key documented in
automemo/presets/default.toml) > preset (`--preset minigallery`) > the benchmark's own defaults >
the defaults; `automemo config show` takes the same flags and prints what a search would use. The run lands in
`RUNS_DIR/<run_id>/`; `--resume RUN_DIR` continues one after a crash, a kill or a spent cap.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

from automemo.cli import UserError, check_folder_place
from automemo.cli.flags import (add_config_flags, add_sandbox_flag, add_source_flags, flag_layer, given_flags,
                                unsafe_confirmed)

DEFAULT_RUNS_DIR = Path("runs")
# A run id names one folder directly under the runs directory: no separators, no "..".
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# The config flags of a search, all from the one flag table (automemo.cli.flags).
SEARCH_FLAGS = ("--benchmark", "--option", "--questions", "--root", "--steps", "--seed", "--strategy", "--parallel",
                "--seed-sweep",
                "--question-budget", "--max-ingest-ms-per-turn", "--max-recall-ms",
                "--meta-model", "--meta-base-url", "--meta-api-key-env", "--agent-model", "--agent-base-url",
                "--agent-api-key-env", "--judge-model", "--judge-base-url", "--judge-api-key-env",
                "--executor", "--ray-address", "--concurrency", "--exam-tasks",
                "--max-usd", "--max-tokens", "--max-chars", "--max-images")
# What a resumed run may change: only its budget. Everything else would make the committed steps
# and the ones to come answers to different questions.
BUDGET_FLAGS = ("--steps", "--question-budget", "--max-usd", "--max-tokens")


def register(sub) -> None:
    p = sub.add_parser("search", help="search for a memo program (budget-aware tree search)",
                       description=__doc__.split("\n\n")[1])
    add_source_flags(p)
    add_config_flags(p, SEARCH_FLAGS)
    add_sandbox_flag(p)
    p.add_argument("--runs-dir", type=Path, metavar="DIR", help=f"where runs are written (default {DEFAULT_RUNS_DIR}/)")
    p.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue an interrupted run from its last committed step")
    p.add_argument("--run-id", metavar="ID", help="name of the new run's folder (default: time-based)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument("--no-preflight", action="store_true",
                   help="skip the check that every LLM endpoint the run uses answers before its first step "
                        "(air-gapped debugging)")
    p.add_argument("--no-report", action="store_true",
                   help="do not keep runs/<id>/report/ current after every step (`automemo report` builds it later)")
    p.set_defaults(func=run)


def resolve_config(args: argparse.Namespace):
    from automemo.config import build_run_config
    from automemo.configtools import ConfigError
    from automemo.resolution import file_layer, preset_layer, resolve

    if args.steps is not None and args.steps < 0:
        raise UserError(f"--steps must be >= 0, got {args.steps}")
    if args.parallel is not None and args.parallel < 1:
        raise UserError(f"--parallel must be at least 1, got {args.parallel}")
    flags = flag_layer(args)
    try:
        if args.resume:
            from automemo.configtools import merge
            from automemo.runs import RunDir, RunDirError

            given = [f for f in given_flags(args) if f not in BUDGET_FLAGS]
            given += [f"--{name.replace('_', '-')}" for name in ("preset", "config", "run_id", "runs_dir")
                      if getattr(args, name) is not None]
            try:
                run = RunDir.open(args.resume) if given in ([], ["--sandbox"]) else None
            except RunDirError as exc:
                raise UserError(str(exc)) from None
            stored = run.config() if run is not None else {}
            if given == ["--sandbox"] and args.sandbox == (stored.get("sandbox") or {}).get("backend"):
                given = []  # the run's own backend, said again: how a run without a sandbox is confirmed
            if given:
                raise UserError(
                    f"--resume continues a run with the config it was started with; drop "
                    f"{', '.join(given)} (only --steps, --question-budget, --max-usd and --max-tokens may extend it)"
                )
            _check_extension(run, args.steps)
            extended = merge(stored, {k: v for k, v in flags.data.items() if k != "sandbox"})
            config = build_run_config(extended)
            _check_question_budget(run, args.question_budget)
            if extended != stored:
                run.write_config(extended)
        else:
            run = None
            _check_output_places(args)
            config = _with_absolute_benchmark_path(
                resolve([preset_layer(args.preset), file_layer(args.config), flags]).config)
            _check_benchmark(config)
            config = _checked_root(config)
    except ConfigError as exc:
        raise UserError(f"bad configuration: {exc}") from None
    from automemo.llm.prices import PriceTable, unpriced_cap_problem

    problem = unpriced_cap_problem(config.llm, PriceTable(config.llm.prices))
    if problem:  # before a run directory exists: a cap that cannot hold must not start a run
        raise UserError(problem)
    from automemo.assembly import AssemblyError, check_isolation

    try:  # before a run directory exists
        check_isolation(config.sandbox.backend, unsafe_confirmed=unsafe_confirmed(args))
    except AssemblyError as exc:
        raise UserError(str(exc)) from None
    return run, config


def _check_extension(run, steps: int | None) -> None:
    """On resume, --steps is the run's new total: one at or below what is done would do nothing."""
    from automemo.search.view import search_steps_done

    done = search_steps_done(run)
    if steps is not None and steps <= done:
        raise UserError(
            f"run {run.run_id} has done {done} step(s) already, and on --resume --steps is the "
            f"run's new total: pass more than {done} (e.g. --steps {done + 10}) to extend it"
        )


def _check_question_budget(run, budget: int | None) -> None:
    """On resume, --question-budget is the run's new total: a sampled run cannot drop its budget
    (its nodes were asked samples), and one at or below what was asked would do nothing."""
    if budget is None:
        return
    from automemo.search.questions import load_plan
    from automemo.search.tree import Tree

    spent = Tree.from_rundir(run).questions_spent
    if load_plan(run.path) is not None and budget <= spent:
        raise UserError(
            f"run {run.run_id} has asked {spent} validation questions already, and on --resume "
            f"--question-budget is the run's new total: pass more than {spent} (e.g. "
            f"--question-budget {2 * spent}) to extend it")


def _check_output_places(args: argparse.Namespace) -> None:
    """Where the new run goes, checked before anything is created."""
    if args.run_id is not None and not RUN_ID.fullmatch(args.run_id):
        raise UserError(
            f"--run-id {args.run_id!r} must be a plain folder name (letters, digits, '.', '_', '-'; "
            f"no '/' or '..'): the run is written as RUNS_DIR/<run_id>"
        )
    runs_dir = args.runs_dir or DEFAULT_RUNS_DIR
    check_folder_place("--runs-dir", runs_dir, runs_dir)


def _with_absolute_benchmark_path(config):
    """A benchmark given as a relative `file.py:Class` is stored with its absolute path: the run's
    config must name the same file when it is resumed (or exported) from another directory."""
    import dataclasses

    from automemo.benchmarks.plugins import absolute_spec

    name = absolute_spec(config.benchmark.name)
    if name == config.benchmark.name:
        return config
    return dataclasses.replace(config, benchmark=dataclasses.replace(config.benchmark, name=name))


def _check_benchmark(config) -> None:
    """An unknown benchmark or a misspelt option fails before the run directory exists."""
    from automemo.benchmarks import checked_options

    try:
        checked_options(config.benchmark.name, config.benchmark.options)
    except ValueError as exc:  # ConfigError is a ValueError
        raise UserError(f"cannot start the search: {exc}") from None


def _checked_root(config):
    """The root names a memo program, checked before the run directory exists; a file or an
    exported folder is stored by its absolute path (a resumed run must read the same program)."""
    import dataclasses

    from automemo.deploy import DeployError, read_manifest
    from automemo.programs import ProgramKind, ProgramNotFound, defines_memo, resolve_program

    root = config.search.root
    try:
        program = resolve_program(root)
        if program.kind is ProgramKind.EXPORT:
            read_manifest(program.path.parent)  # its files as exported, hashes checked
    except (ProgramNotFound, DeployError) as exc:
        raise UserError(f"--root {root}: {exc}") from None
    problem = defines_memo(program.source)
    if problem:
        raise UserError(f"--root {root}: {problem}; pass a memo program (a class Memo with update and retrieve), "
                        f"a seed name or discovered")
    if program.kind in (ProgramKind.FILE, ProgramKind.EXPORT):
        where = str(program.path.parent if program.kind is ProgramKind.EXPORT else program.path)
        return dataclasses.replace(config, search=dataclasses.replace(config.search, root=where))
    return config


def run(args: argparse.Namespace) -> int:
    run_dir, config = resolve_config(args)
    from automemo.config import run_config_to_dict
    from automemo.runs import RunDir, RunDirError
    from automemo.runs.journal import record_event

    fresh = run_dir is None
    if fresh:
        try:
            run_dir = RunDir.create(args.runs_dir or DEFAULT_RUNS_DIR, run_config_to_dict(config), args.run_id)
        except RunDirError as exc:
            raise UserError(str(exc)) from None
        record_event(run_dir, "created", f"run {run_dir.run_id} created")
    args.resume_command = f"automemo search --resume {run_dir.path}"
    if not args.quiet:
        print(f"run directory: {run_dir.path}")
        if not fresh:
            done = run_dir.last_step()
            print(f"resuming: {done if done is not None else 'no'} step(s) done of {config.search.steps}")
    try:
        search = _build(run_dir, config, args)
        search.loop.plan_questions()  # a budget below one sample is refused before anything runs
    except BaseException:
        if fresh:  # nothing ran: do not leave an empty run behind to confuse `tree`/`--resume`
            shutil.rmtree(run_dir.path, ignore_errors=True)
        raise
    upkeep = None
    if not args.no_report:
        from automemo.report.upkeep import ReportUpkeep

        upkeep = ReportUpkeep(run_dir)
        search.loop.parts.on_commit = upkeep.refresh  # the scheduler tells it each committed step
        upkeep.refresh()  # a page from the start: the root's evaluation can take a while
    try:
        final = search.loop.run_search()
        heldout = _heldout_test(run_dir, config, search, final, quiet=args.quiet)
    finally:
        search.close()
        if upkeep is not None:
            upkeep.finish()  # the final page: finished or stopped, no longer reloading
    if args.quiet:
        print(json.dumps({"run": str(run_dir.path), "node_id": final.get("node_id"),
                          "stop_reason": final["stop_reason"]}))
    else:
        print(f"inspect: automemo tree {run_dir.path}   export: automemo export {run_dir.path} --out DIR")
        if upkeep is not None:
            print(f"report: {run_dir.path / 'report' / 'index.html'}")
    for line in heldout:
        print(line)
    if final["stop_reason"] == "questions":
        q = final["questions"]
        print(f"the question budget ({q['scored']} of {q['budget']} questions asked) ended the search after "
              f"{final['steps_done']} of {final['steps']} steps, and the final choice was confirmed with what "
              f"it kept; to go on, give it more: {args.resume_command} --question-budget "
              f"{2 * q['budget']}")
    if final["stop_reason"] == "endpoint":
        print("automemo: error: the search stopped because an LLM endpoint kept failing (see the "
              "last step line); everything committed is kept. Once the server answers again, "
              f"continue with: {args.resume_command}", file=sys.stderr)
        return 1
    if final["stop_reason"] == "infrastructure":
        # The host failed, not a program: the run stopped early (its sentence is in the display
        # and the event log), and a script must see that it did.
        print(f"automemo: error: the search stopped on a host failure; everything committed is "
              f"kept. Once it is fixed, continue with: {args.resume_command}", file=sys.stderr)
        return 1
    return 0


def _heldout_test(run_dir, config, search, final, *, quiet: bool = False) -> list[str]:
    """`search.heldout_test`: the selection and the best hand design scored on the test split,
    recorded in final.json and returned as the lines to print last."""
    if not config.search.heldout_test or final.get("node_id") is None:
        return []
    if not quiet:  # a minute or more with nothing on screen otherwise
        print("scoring the selection and the best hand design on the held-out test split …", flush=True)
    from automemo.search.heldout import compare_on_test, sentences
    from automemo.search.view import RunView

    doc = compare_on_test(RunView.load(run_dir), search.setup.evaluator)
    if doc is None:
        return ["Held-out test split: not compared (the search's evaluation was not exact)."]
    run_dir.write_final({**final, "heldout_test": doc})
    return sentences(doc)


def _build(run_dir, config, args):
    from automemo.assembly import AssemblyError, build_search

    try:
        return build_search(run_dir, config, quiet=args.quiet, unsafe_confirmed=unsafe_confirmed(args),
                            preflight=not args.no_preflight)
    except AssemblyError as exc:
        raise UserError(str(exc)) from None
