"""The session contract every sandbox backend keeps, run for real in each backend."""

from __future__ import annotations

import _imp
import textwrap
import threading
import time

import pytest
from PIL import Image

from automemo.contract import EpisodeRecorder, ImageRef, MemoryPayload, PartialRecorder
from automemo.episode_store import EpisodeStore
from automemo.sandbox import (
    BadResult,
    CallTimeout,
    Limits,
    ProgramError,
    ProgramLoadError,
    SessionDead,
)
from automemo.toolkit.api import ToolkitUnavailable
from sandboxtools import ALL_BACKENDS, ISOLATING, sandbox

pytestmark = pytest.mark.timeout(120)


def episode(task_id: str, **kw) -> dict:
    return EpisodeRecorder(task_id=task_id, benchmark="t", instruction=f"do {task_id}", **kw).to_dict()


def task(task_id: str = "q") -> dict:
    return PartialRecorder(task_id=task_id, benchmark="t", instruction="what?").to_dict()


def program(body: str) -> str:
    header = "from automemo.contract import MemoProgram, MemoryPayload\n"
    return header + textwrap.dedent(body)


LIST_MEMO = program("""
    class Memo(MemoProgram):
        def __init__(self, toolkit):
            self.toolkit = toolkit
            self.seen = []
        def update(self, episode):
            if episode.task_id == "bad":
                raise ValueError("boom on " + episode.task_id)
            self.seen.append(episode.task_id)
        def retrieve(self, task):
            return MemoryPayload(text=" ".join(self.seen), metadata={"evidence": self.seen})
""")


@pytest.fixture(params=ALL_BACKENDS)
def backend(request):
    return sandbox(request.param)


@pytest.fixture(params=ISOLATING)
def isolating(request):
    return sandbox(request.param)


def test_open_ping_describe(backend):
    with backend.open(LIST_MEMO) as session:
        assert session.alive
        assert session.call("ping", {}) == "pong"
        facts = session.call("describe", {})
        assert facts["python"].startswith("3.11")
        assert facts["memo_class"] == "memo_program.Memo"
        # A session opens without numpy or faiss: they load only when a program uses them.
        assert "numpy" not in facts["loaded_modules"] and "faiss" not in facts["loaded_modules"]
    assert not session.alive


def test_a_session_opens_while_another_thread_holds_the_import_lock(backend):
    """A parallel search opens sessions from several threads while another thread may hold the
    interpreter's import lock for seconds (importing torch for the first embedding). Opening a
    session must not wait for that lock: a `preexec_fn` did (CPython takes the import lock
    before forking), and with logging's lock in the mix the search deadlocked."""
    with backend.open(LIST_MEMO) as session:  # the host side's own lazy imports happen here
        session.call("ping", {})
    held, release = threading.Event(), threading.Event()

    def hold_the_import_lock():
        _imp.acquire_lock()
        try:
            held.set()
            release.wait(120)
        finally:
            _imp.release_lock()

    opened = threading.Event()

    def open_a_session():
        with backend.open(LIST_MEMO) as session:
            session.call("update", {"episode": episode("a")})
        opened.set()

    threading.Thread(target=hold_the_import_lock, daemon=True).start()
    assert held.wait(10)
    opener = threading.Thread(target=open_a_session, daemon=True)
    opener.start()
    try:
        assert opened.wait(45), "opening a session waited for the import lock"
    finally:
        release.set()
        opener.join(60)


@pytest.mark.bwrap
def test_bwrap_without_cgroups_bounds_the_guest_with_rlimits(monkeypatch):
    from automemo.sandbox.cgroups import SessionCgroup

    monkeypatch.setattr(SessionCgroup, "create", classmethod(lambda cls, name, limits: None))
    source = program("""
        import resource
        class Memo(MemoProgram):
            def update(self, episode): pass
            def retrieve(self, task):
                names = ("RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_CORE")
                return MemoryPayload(metadata={n: list(resource.getrlimit(getattr(resource, n)))
                                               for n in names})
    """)
    limits = Limits(memory_mb=700, pids=48)
    with sandbox("bwrap").open(source, limits) as session:
        seen = session.call("retrieve", {"task": task()})["metadata"]
    assert seen == {"RLIMIT_AS": [700 << 20] * 2, "RLIMIT_NPROC": [48, 48], "RLIMIT_CORE": [0, 0]}


def test_guest_runs_as_nobody_without_host_environment(isolating, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-canary")
    source = program("""
        import os
        class Memo(MemoProgram):
            def update(self, episode): pass
            def retrieve(self, task):
                return MemoryPayload(text=repr(dict(os.environ)),
                                     metadata={"uid": os.getuid(), "gid": os.getgid(),
                                               "groups": os.getgroups()})
    """)
    with isolating.open(source) as session:
        result = session.call("retrieve", {"task": task()})
    meta = result["metadata"]
    assert (meta["uid"], meta["gid"]) == (65534, 65534)
    assert set(meta["groups"]) <= {65534}, "the guest kept a supplementary group of the host"
    assert "sk-secret-canary" not in result["text"] and "OPENAI_API_KEY" not in result["text"]


def test_update_then_retrieve_keeps_state_across_calls(backend):
    with backend.open(LIST_MEMO) as session:
        for tid in ("a", "b", "c"):
            assert session.call("update", {"episode": episode(tid)}) is None
        payload = MemoryPayload.from_dict(session.call("retrieve", {"task": task()}))
    assert payload.text == "a b c"
    assert payload.metadata["evidence"] == ["a", "b", "c"]


def test_retrieve_result_is_validated_and_session_survives(backend):
    source = program("""
        class Memo(MemoProgram):
            def update(self, episode): pass
            def retrieve(self, task):
                if task.task_id == "dict":
                    return {"text": "fine as a dict", "metadata": {"k": [1, 2]}}
                return {"text": 5}
    """)
    with backend.open(source) as session:
        with pytest.raises(BadResult) as err:
            session.call("retrieve", {"task": task("wrong")})
        assert err.value.kind == "bad-result"
        assert "retrieve() result.text: expected a string, got int 5" in str(err.value)
        ok = session.call("retrieve", {"task": task("dict")})
        assert MemoryPayload.from_dict(ok) == MemoryPayload(text="fine as a dict", metadata={"k": [1, 2]})


def test_program_exception_keeps_session_alive(backend):
    with backend.open(LIST_MEMO) as session:
        session.call("update", {"episode": episode("a")})
        with pytest.raises(ProgramError) as err:
            session.call("update", {"episode": episode("bad")})
        assert err.value.kind == "exception"
        assert "ValueError: boom on bad" in str(err.value)
        assert 'File "memo_program.py"' in err.value.traceback
        assert "runner.py" not in err.value.traceback
        session.call("update", {"episode": episode("b")})
        assert session.call("retrieve", {"task": task()})["text"] == "a b"


def test_timeout_kills_the_whole_tree_and_reports(backend):
    source = program("""
        import os, time
        class Memo(MemoProgram):
            def update(self, episode):
                if os.fork() == 0:
                    os.setsid()  # a child that leaves the runner's session must die too
                    while True:
                        time.sleep(0.01)
                while True:
                    pass
            def retrieve(self, task):
                return MemoryPayload()
    """)
    session = backend.open(source)
    try:
        started = time.monotonic()
        with pytest.raises(CallTimeout) as err:
            session.call("update", {"episode": episode("slow")}, timeout=1.5)
        assert time.monotonic() - started < 10
        assert err.value.kind == "timeout" and "1.5 s" in str(err.value)
        assert not session.alive
        assert guest_processes_left(session) == []
        with pytest.raises(SessionDead):
            session.call("ping", {})
    finally:
        session.close()


def guest_processes_left(session) -> list:
    """What is still running of the guest, asked of the mechanism each backend isolates with."""
    guest = session.guest
    if hasattr(guest, "container"):
        guest.container.reload()
        return [] if guest.container.status in ("exited", "dead") else [guest.container.status]
    if getattr(guest, "cgroup", None) is not None:
        return guest.cgroup.pids()
    # The unsafe backend: the runner led a process group; the setsid child left it, so look
    # for any process whose parent chain reaches the runner (it was reparented on death).
    import subprocess
    out = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if "automemo.sandbox.runner" in ln
            and str(session.dirs.socket_path) in ln]


class RecordingServices:
    """A small HostServices: answers like the real one would, and records what it was asked."""

    def __init__(self, *, llm_available: bool = True):
        self.requests: list[tuple[str, dict]] = []
        self.llm_available = llm_available

    def handle(self, method, params):
        self.requests.append((method, params))
        if method == "embed_text":
            return [[float(len(t)), 1.0] for t in params["texts"]]
        if method == "llm":
            if not self.llm_available:
                raise ToolkitUnavailable("no memo model is configured for this run")
            return f"summary of {params['prompt']} ({len(params['images'])} images)"
        if method == "embedding_dims":
            return {"text": 2, "image": 3}
        if method == "has_llm":
            return self.llm_available
        raise KeyError(f"unknown host method {method}")


SERVICES_MEMO = program("""
    from automemo.toolkit.api import ToolkitUnavailable
    class Memo(MemoProgram):
        def __init__(self, toolkit):
            self.toolkit = toolkit
            self.notes = []
            self.dims = toolkit.embedding_dims()
        def update(self, episode):
            vec = self.toolkit.embed_text([episode.instruction])[0]
            try:
                note = self.toolkit.llm(episode.instruction, images=episode.task_images)
            except ToolkitUnavailable as exc:
                note = "fallback: " + str(exc)
            self.notes.append({"vec": vec, "note": note})
        def retrieve(self, task):
            try:
                self.toolkit.embed_image([])
                self.toolkit.llm("x", purpose="probe") if self.toolkit.has_llm() else None
                self.toolkit._host("no_such_method", {})
            except RuntimeError as exc:
                err = str(exc)
            return MemoryPayload(text=self.notes[-1]["note"],
                                 metadata={"notes": self.notes, "dims": self.dims, "err": err})
""")


def test_host_services_round_trip(backend):
    services = RecordingServices()
    ref = ImageRef(path="images/aa.png", sha256="aa")
    with backend.open(SERVICES_MEMO, services=services) as session:
        session.call("update", {"episode": episode("a", task_images=(ref,))})
        result = session.call("retrieve", {"task": task()})
    assert result["text"] == "summary of do a (1 images)"
    assert result["metadata"]["notes"][0]["vec"] == [4.0, 1.0]
    assert result["metadata"]["dims"] == {"text": 2, "image": 3}
    assert "unknown host method no_such_method" in result["metadata"]["err"]
    methods = [m for m, _ in services.requests]
    assert methods[:3] == ["embedding_dims", "embed_text", "llm"]
    llm_params = services.requests[2][1]
    assert llm_params["images"] == [ref.to_dict()] and llm_params["max_tokens"] == 512


def test_host_service_unavailable_reaches_program_as_toolkit_unavailable(backend):
    with backend.open(SERVICES_MEMO, services=RecordingServices(llm_available=False)) as session:
        session.call("update", {"episode": episode("a")})
        text = session.call("retrieve", {"task": task()})["text"]
    assert text == "fallback: no memo model is configured for this run"


def test_no_services_means_toolkit_unavailable(backend):
    with pytest.raises(ProgramLoadError) as err:
        backend.open(SERVICES_MEMO, services=None)
    assert "ToolkitUnavailable" in str(err.value) and "no host services" in str(err.value)


def test_episode_store_is_readable(backend, tmp_path):
    store = EpisodeStore(tmp_path / "store")
    ref = store.put_image(Image.new("RGB", (7, 5), (200, 10, 30)), caption="red")
    source = program("""
        class Memo(MemoProgram):
            def update(self, episode):
                img = self.toolkit.image(episode.task_images[0])
                self.seen = [img.size, img.getpixel((0, 0))]
            def retrieve(self, task):
                return MemoryPayload(metadata={"seen": self.seen})
    """)
    with backend.open(source, store_root=store.root) as session:
        session.call("update", {"episode": episode("a", task_images=(ref,))})
        assert session.call("retrieve", {"task": task()})["metadata"]["seen"] == [[7, 5], [200, 10, 30]]


def test_state_dir_is_writable_and_holds_the_sqlite_db(backend):
    source = program("""
        class Memo(MemoProgram):
            def update(self, episode):
                self.toolkit.db("mem")["episodes"].insert({"id": episode.task_id})
                (self.toolkit.state_dir / "notes.txt").write_text(episode.task_id)
            def retrieve(self, task):
                rows = [r["id"] for r in self.toolkit.db("mem")["episodes"].rows]
                names = sorted(p.name for p in self.toolkit.state_dir.iterdir())
                return MemoryPayload(text=(self.toolkit.state_dir / "notes.txt").read_text(),
                                     metadata={"rows": rows, "files": names})
    """)
    with backend.open(source) as session:
        for tid in ("a", "b"):
            session.call("update", {"episode": episode(tid)})
        result = session.call("retrieve", {"task": task()})
    assert result["text"] == "b"
    assert result["metadata"] == {"rows": ["a", "b"], "files": ["mem.db", "notes.txt"]}


def test_concurrent_calls_from_threads_serialise(backend):
    source = program("""
        import time
        class Memo(MemoProgram):
            def __init__(self, toolkit):
                self.busy = False
                self.seen = []
            def update(self, episode):
                if self.busy:
                    raise RuntimeError("two calls overlapped")
                self.busy = True
                time.sleep(0.02)
                self.seen.append(episode.task_id)
                self.busy = False
            def retrieve(self, task):
                return MemoryPayload(metadata={"seen": self.seen})
    """)
    errors: list[BaseException] = []
    with backend.open(source) as session:
        def worker(i: int) -> None:
            try:
                session.call("update", {"episode": episode(f"t{i}")})
            except BaseException as exc:  # collected, asserted below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seen = session.call("retrieve", {"task": task()})["metadata"]["seen"]
    assert errors == []
    assert sorted(seen) == [f"t{i}" for i in range(8)]


@pytest.mark.parametrize("source, expected", [
    ("class Memo(:\n", "SyntaxError"),
    ("import no_such_module_xyz\n", "ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ("x = 1\n", "no class named Memo"),
    (program("class Memo(MemoProgram):\n    def __init__(self, tk):\n        raise KeyError('init')\n"),
     "KeyError: 'init'"),
])
def test_program_that_does_not_load_is_reported(backend, source, expected):
    with pytest.raises(ProgramLoadError) as err:
        backend.open(source)
    assert err.value.kind == "import"
    assert expected in str(err.value)


def test_oversized_result_is_refused_and_session_survives(backend):
    source = program("""
        class Memo(MemoProgram):
            def update(self, episode): pass
            def retrieve(self, task):
                return MemoryPayload(text="x" * int(task.task_id))
    """)
    with backend.open(source, Limits(max_result_bytes=100_000)) as session:
        with pytest.raises(BadResult) as err:
            session.call("retrieve", {"task": task("200000")})
        assert "at most 100,000 bytes" in str(err.value)
        assert len(session.call("retrieve", {"task": task("1000")})["text"]) == 1000
