"""`build_report(run_dir)`: the static HTML report of a run.

    report/index.html        overview: spend, progress chart, the generation tree, node list
    report/nodes/<id>.html   one page per node: diff, diagnosis, exam, evaluations, samples
    report/img/*.jpg         thumbnails of payload images and agent screenshots

Self-contained: inline CSS, inline SVG, relative links, no network, so it opens from file:// and
can be zipped and mailed. While the search runs, its pages reload themselves (a meta refresh)
and say what is in flight; the final build after the run ends does not reload. Re-running refreshes it in place (a running search keeps
adding nodes) and removes pages and images that no longer belong to it.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import jinja2
from markupsafe import Markup
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from automemo.episode_store import atomic_write
from automemo.report.charts import progress_chart
from automemo.report.config import ReportConfig
from automemo.report.front_chart import front_chart
from automemo.report.highlight import highlight_css, highlight_python
from automemo.report.media import IMG_DIR, ImageSink
from automemo.report.node_page import gather_node
from automemo.report.overview import RunData, gather_run
from automemo.report.tree_layout import draw_tree, layout_tree
from automemo.runs import RunDir
from automemo.terminal import progress_wanted

TEMPLATES_DIR = Path(__file__).parent / "templates"
NODES_DIR = "nodes"


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@functools.lru_cache(maxsize=1)
def _css() -> Markup:
    # Our own stylesheet, inlined verbatim: escaping its quotes would break it.
    return Markup((TEMPLATES_DIR / "_style.css").read_text() + "\n" + highlight_css())


def build_report(
    run_dir: str | os.PathLike | RunDir,
    out_dir: str | os.PathLike | None = None,
    *,
    config: ReportConfig = ReportConfig(),
    quiet: bool = False,
    live: bool = False,
) -> Path:
    """Write the report of `run_dir` (default into `<run_dir>/report/`); return index.html.
    `live`: built by the running search itself, so its pages follow the run and reload."""
    run = run_dir if isinstance(run_dir, RunDir) else RunDir.open(run_dir)
    out = Path(out_dir) if out_dir is not None else run.path / "report"
    data = gather_run(run, live=live)  # reads the whole tree first: a run it cannot read leaves no folder
    view = data.view
    (out / NODES_DIR).mkdir(parents=True, exist_ok=True)
    sink = ImageSink(
        out, max_px=config.thumb_px, quality=config.jpeg_quality, byte_budget=config.image_budget_bytes
    )
    cards = {c.id: c for c in data.nodes}
    env = environment()
    common = dict(run=data.overview, css=_css())

    pages: set[str] = set()
    with _progress(quiet) as progress:
        task = progress.add_task("report: node pages", total=len(data.nodes))
        for card in data.nodes:
            detail = gather_node(view, card.id, sink, config)
            html = env.get_template("node.html").render(
                **common, card=card, detail=detail, program_html=highlight_python(detail.source)
            )
            name = f"{card.id}.html"
            atomic_write(out / NODES_DIR / name, html.encode())
            pages.add(name)
            progress.advance(task)

    index = out / "index.html"
    atomic_write(index, _render_index(env, data, cards, common, sink.omitted).encode())
    _remove_stale(out / NODES_DIR, pages)
    _remove_stale(out / IMG_DIR, sink.written)
    return index


def _render_index(env, data: RunData, cards, common, omitted: int) -> str:
    drawing = draw_tree(layout_tree((c.id, c.parent) for c in data.nodes))
    chart = progress_chart(data.points, data.actions, planned_steps=data.overview.planned_steps)
    front = data.view.front
    front_drawing = front_chart(front, bound_ms=data.view.search.max_ingest_ms_per_turn)
    selected = cards.get(data.overview.selected_id) if data.overview.selected_id is not None else None
    return env.get_template("index.html").render(
        **common,
        nodes=data.nodes,
        cards=cards,
        selected=selected,
        failed_count=sum(1 for c in data.nodes if c.failed),
        drawing=drawing,
        chart=chart,
        front=front_drawing,
        front_sentence=front.sentence(),
        bounds=data.view.bounds,
        omitted_images=omitted,
    )


def _remove_stale(folder: Path, keep: set[str]) -> None:
    """Pages and images of an earlier build that this one did not produce (e.g. a resumed run
    whose uncommitted node was discarded, or images now over the budget)."""
    if not folder.exists():
        return
    for path in folder.iterdir():
        if path.is_file() and path.name not in keep:
            path.unlink()


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        disable=not progress_wanted(quiet),
        transient=True,
    )


def report_size(out_dir: Path) -> int:
    """Total bytes of a report folder."""
    return sum(p.stat().st_size for p in Path(out_dir).rglob("*") if p.is_file())
