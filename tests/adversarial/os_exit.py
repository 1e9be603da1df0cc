# update calls os._exit, which nothing can catch: the guest is gone and the session says how.
# expect-kind: crash
# expect-message: exited with code 7
import os

from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        os._exit(7)

    def retrieve(self, task):
        return MemoryPayload()
