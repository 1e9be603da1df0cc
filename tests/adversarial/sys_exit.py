# update calls sys.exit. SystemExit is caught like any exception; the session lives on.
# expect-kind: exception
# expect-message: sys.exit\(3\)
# expect-alive: yes
import sys

from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        sys.exit(3)

    def retrieve(self, task):
        return MemoryPayload()
