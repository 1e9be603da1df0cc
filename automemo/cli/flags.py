"""Every flag that sets a configuration value, defined once for every command: its spelling,
the config key it sets and its help. A command adds the flags it takes by name
(`add_config_flags`), the sandbox choice (`add_sandbox_flag`) and the config sources
(`add_source_flags`); `flag_layer(args)` turns what was given into the top layer of
`automemo.resolution.resolve`, so that every command resolves with one precedence:

    flag > --config FILE > --preset NAME > benchmark > default

No flag carries a default of its own: a flag not given leaves the key to the layers below
(`automemo config show` prints every value and where it came from)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from automemo.benchmarks.pseudo.config import QUESTION_SOURCES
from automemo.cli import UserError

# The sandbox backends a command may be given. "unsafe" is the one spelling of "no sandbox":
# memo programs then run as plain local processes, without isolation (trusted programs only).
SANDBOX_CHOICES = ("auto", "docker", "bwrap", "unsafe")
NO_SANDBOX = "unsafe"
# Old spellings of "no sandbox", still accepted with a notice; not listed in --help.
DEPRECATED_NO_SANDBOX = ("none", "local")
ROLES = {"meta": "the meta agent (none: the offline generator)", "agent": "the fixed execution agent",
         "judge": "the LLM judge (default: the agent's)"}


@dataclass(frozen=True)
class ConfigFlag:
    """A command-line flag that sets one configuration key."""

    flag: str                     # "--steps"
    key: str                      # "search.steps"
    help: str
    type: Callable[[str], Any] = str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    boolean: bool = False         # --x / --no-x

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")


def _role_flags() -> Iterable[ConfigFlag]:
    for role, who in ROLES.items():
        yield ConfigFlag(f"--{role}-model", f"llm.{role}.model", f"model of {who}", metavar="M")
        yield ConfigFlag(f"--{role}-base-url", f"llm.{role}.base_url",
                         f"OpenAI-compatible …/v1 URL of the {role} model", metavar="URL")
        yield ConfigFlag(f"--{role}-api-key-env", f"llm.{role}.api_key_env",
                         f"environment variable holding the {role} model's API key", metavar="VAR")


def _strategies() -> tuple[str, ...]:
    from automemo.search.config import STRATEGIES

    return STRATEGIES


CONFIG_FLAGS: dict[str, ConfigFlag] = {f.flag: f for f in (
    ConfigFlag("--benchmark", "benchmark.name",
               "benchmark name, e.g. minigallery, miniwob, memgallery / locomo (with --option path=...), "
               "or your own as path/to/file.py:ClassName", metavar="NAME"),
    ConfigFlag("--questions", "benchmark.questions", "what programs are scored on: the benchmark's own "
               "labelled questions, or pseudo-questions the search writes from the sessions itself (self) or "
               "with the LLM role of benchmark.pseudo.llm_role (llm): no labelled question is read "
               "(docs/label-free.md); or questions from an agent's feedback on recalls, older ones fit and "
               "newer ones race (feedback; docs/serve.md)", choices=QUESTION_SOURCES),
    ConfigFlag("--steps", "search.steps", "search steps after the root's evaluation; with --resume, "
               "the run's new total", type=int, metavar="N"),
    ConfigFlag("--seed", "search.seed", "run seed; every random choice derives from it", type=int),
    ConfigFlag("--strategy", "search.strategy", "search strategy: tree (final by LCB), alma, greedy, "
               "random (final by best mean)", choices=_strategies()),
    ConfigFlag("--parallel", "search.parallel", "search actions in flight at once (1: one step after "
               "another)", type=int, metavar="K"),
    ConfigFlag("--root", "search.root", "the program the search starts from and, without labels, is held to: "
               "discovered (the discovered default; a label-free search's default), a seed name, a program "
               "file, or a folder written by `automemo export`", metavar="PROGRAM"),
    ConfigFlag("--seed-sweep", "search.seed_sweep", "transplant every seed under the root before the "
               "strategy chooses, one step each (on for retrieval-mode benchmarks; docs/search.md)",
               boolean=True),
    ConfigFlag("--question-budget", "search.question_budget", "validation questions the whole search "
               "may have scored (0: none; every evaluation scores every question); with --resume, the "
               "run's new total", type=int, metavar="N"),
    ConfigFlag("--max-ingest-ms-per-turn", "search.max_ingest_ms_per_turn", "select only programs whose "
               "CPU per remembered turn (host encoding counted cold, and the guest) is at most X ms "
               "(0: no bound; docs/cost.md)", type=float, metavar="X"),
    ConfigFlag("--max-recall-ms", "search.max_recall_ms", "select only programs whose mean CPU per recall "
               "(host encoding counted cold, and the guest) is at most Y ms (0: no bound)", type=float,
               metavar="Y"),
    ConfigFlag("--exam-tasks", "search.exam_tasks", "update episodes and retrieve tasks the quick exam "
               "runs a program on", type=int, metavar="N"),
    *_role_flags(),
    # Budgets. --max-tokens and --max-usd are the run's caps over every role and call; a cap on
    # one call's completion is a role's max_tokens ([llm.<role>] in a config file).
    ConfigFlag("--max-tokens", "llm.max_total_tokens", "the run's token cap: no new LLM call starts "
               "once this many tokens (prompt + completion, all roles) are used", type=int, metavar="N"),
    ConfigFlag("--max-usd", "llm.max_usd", "the run's spend cap: stop cleanly once this much is spent "
               "on LLM calls", type=float, metavar="USD"),
    ConfigFlag("--max-chars", "budget.max_chars", "retrieval budget: characters a payload may carry",
               type=int, metavar="N"),
    ConfigFlag("--max-images", "budget.max_images", "retrieval budget: images a payload may attach",
               type=int, metavar="N"),
    ConfigFlag("--concurrency", "evaluation.concurrency", "retrieve tasks in flight", type=int, metavar="N"),
    ConfigFlag("--executor", "evaluation.executor", "where evaluation episodes run: threads of this "
               "process, or Ray workers", choices=("threads", "ray")),
    ConfigFlag("--ray-address", "evaluation.ray.address", "an existing Ray cluster (e.g. "
               "ray://head:10001); empty: a local one", metavar="ADDR"),
)}
OPTION_FLAG = "--option"  # benchmark.options, one KEY=VALUE at a time
SANDBOX_FLAG = "--sandbox"  # sandbox.backend


def add_config_flags(p: argparse.ArgumentParser, flags: Iterable[str], *,
                     help: dict[str, str] | None = None) -> None:
    """Add the named flags of `CONFIG_FLAGS` (and "--option") to parser `p`; `help` rewords a
    flag for this command (its key and meaning stay)."""
    taken = list(p.get_default("config_flags") or ())
    for name in flags:
        if name == OPTION_FLAG:
            p.add_argument(OPTION_FLAG, action="append", metavar="KEY=VALUE",
                           help="benchmark option, e.g. path=DIR for memgallery / locomo (VALUE parsed "
                                "as JSON when it can be), repeatable [benchmark.options]")
            taken.append(name)
            continue
        flag = CONFIG_FLAGS[name]
        text = (help or {}).get(name, flag.help) + f" [{flag.key}]"
        if flag.boolean:
            p.add_argument(flag.flag, action=argparse.BooleanOptionalAction, default=None, help=text)
        else:
            p.add_argument(flag.flag, type=flag.type, metavar=flag.metavar, choices=flag.choices, help=text)
        taken.append(name)
    p.set_defaults(config_flags=tuple(taken))  # what flag_layer reads back


def add_source_flags(p: argparse.ArgumentParser, *, preset: bool = True) -> None:
    """--preset and --config: the layers under the flags."""
    if preset:
        p.add_argument("--preset", metavar="NAME",
                       help="a preset under automemo/presets (minigallery, miniwob, memgallery-sample, longmemeval; "
                            "default: none)")
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="a TOML config (keys as in automemo/presets/default.toml); flags override it")


def add_sandbox_flag(p: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """--sandbox BACKEND, and the old --unsafe-no-sandbox (hidden, with a notice). A command
    that reads no config file (the bench commands) gives its `default`; the others leave an
    absent flag to the config's sandbox.backend."""
    p.add_argument(SANDBOX_FLAG, type=_sandbox_name, default=default, metavar="{" + ",".join(SANDBOX_CHOICES) + "}",
                   help="sandbox backend [sandbox.backend]: auto (docker if its image is built, else "
                        "bwrap), docker, bwrap, or unsafe: no isolation, memo programs run as plain "
                        "local processes (only for programs you trust; a config file's \"unsafe\" "
                        "needs it confirmed here)")
    p.add_argument("--unsafe-no-sandbox", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(sandbox_default=default)


def _sandbox_name(value: str) -> str:
    if value in DEPRECATED_NO_SANDBOX:
        _deprecated(f"--sandbox {value}")
        return NO_SANDBOX
    if value not in SANDBOX_CHOICES:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {value!r} (choose from {', '.join(SANDBOX_CHOICES)})")
    return value


def _deprecated(spelling: str) -> None:
    print(f"automemo: note: {spelling} is deprecated; say --sandbox {NO_SANDBOX}", file=sys.stderr)


def sandbox_choice(args: argparse.Namespace) -> str | None:
    """The backend given on the command line (None: none given), the old spelling folded in."""
    given = getattr(args, "sandbox", None)
    if getattr(args, "unsafe_no_sandbox", False):
        if given not in (None, NO_SANDBOX, getattr(args, "sandbox_default", None)):
            raise UserError(f"--unsafe-no-sandbox and --sandbox {given} contradict each other; pass one")
        _deprecated("--unsafe-no-sandbox")
        args.unsafe_no_sandbox = False  # said once
        args.sandbox = given = NO_SANDBOX
    return given


def unsafe_confirmed(args: argparse.Namespace) -> bool:
    """Running without a sandbox is confirmed only by saying so on the command line."""
    return sandbox_choice(args) == NO_SANDBOX


def flag_layer(args: argparse.Namespace):
    """The flags given, as the top layer of the resolution (each key names its flag)."""
    from automemo.resolution import Layer

    data: dict[str, Any] = {}
    flags: dict[str, str] = {}
    for name in getattr(args, "config_flags", ()):
        if name == OPTION_FLAG:
            options = benchmark_options(getattr(args, "option", None) or [])
            if options:
                for key, value in options.items():
                    _put(data, f"benchmark.options.{key}", value)
                    flags[f"benchmark.options.{key}"] = f"flag {OPTION_FLAG} {key}=…"
            continue
        flag = CONFIG_FLAGS[name]
        value = getattr(args, flag.dest, None)
        if value is not None:
            _put(data, flag.key, value)
            flags[flag.key] = f"flag {flag.flag}"
    backend = sandbox_choice(args)
    if backend is not None:
        _put(data, "sandbox.backend", backend)
        flags["sandbox.backend"] = f"flag {SANDBOX_FLAG} {backend}"
    return Layer("flag", data, flags)


def given_flags(args: argparse.Namespace) -> list[str]:
    """The config flags given on this command line, by name."""
    layer = flag_layer(args)
    return sorted({source.split()[1] for source in layer.sources.values()})


def _put(data: dict[str, Any], key: str, value: Any) -> None:
    *parents, leaf = key.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """`--option KEY=VALUE` items as a mapping, each VALUE parsed as JSON when it can be."""
    options: dict[str, Any] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UserError(f"--option {item!r}: expected KEY=VALUE, e.g. --option n_users=2")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def benchmark_options(items: list[str]) -> dict[str, Any]:
    """--option KEY=VALUE pairs; a relative `path` is made absolute, so that a run's config names
    the same data when it is resumed from another directory (a shipped data set,
    `@mem-gallery-sample`, is a name and stays one)."""
    options = parse_options(items)
    if isinstance(options.get("path"), str) and options["path"] and not options["path"].startswith("@"):
        options["path"] = str(Path(options["path"]).expanduser().resolve())
    return options
