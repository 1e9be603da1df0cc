# update never returns. The per-call wall-clock limit kills the guest.
# expect-kind: timeout
# expect-message: update ran past its .* wall-clock limit
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        n = 0
        while True:
            n += 1

    def retrieve(self, task):
        return MemoryPayload()
