# A program that allocates (and touches) memory until something stops it: the memory limit.
# expect-kind: crash|exception
# expect-message: memory limit of \d+ MB|MemoryError
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        self.hoard = []
        while True:
            self.hoard.append(b"\x01" * (32 << 20))

    def retrieve(self, task):
        return MemoryPayload()
