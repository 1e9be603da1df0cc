# retrieve returns a 10 MB payload. The runner refuses it before it crosses the channel.
# expect-kind: bad-result
# expect-message: 10,\d{3},\d{3}-byte payload; the sandbox accepts at most
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return MemoryPayload(text="x" * (10 << 20))
