# A program that hunts for the host's API key in every environment it can see: its own, and
# /proc/<pid>/environ of every visible process. It returns all of it; the key must not be there.
# expect-kind: ok
# expect-absent: sk-secret-canary
import os

from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        seen = [repr(dict(os.environ))]
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            for name in ("environ", "cmdline"):
                try:
                    with open(f"/proc/{pid}/{name}", "rb") as fh:
                        seen.append(f"{pid}/{name}: {fh.read()!r}")
                except OSError as exc:
                    seen.append(f"{pid}/{name}: {exc}")
        return MemoryPayload(text="\n".join(seen))
