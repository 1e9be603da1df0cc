# The classic fork bomb. The pids limit stops it inside the sandbox; the host never notices.
# expect-kind: exception|timeout
# expect-message: BlockingIOError|Resource temporarily unavailable|wall-clock limit
import os

from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        while True:
            os.fork()

    def retrieve(self, task):
        return MemoryPayload()
