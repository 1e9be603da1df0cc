# retrieve returns a number instead of a payload.
# expect-kind: bad-result
# expect-message: retrieve\(\) result: expected a MemoryPayload
from automemo.contract import MemoProgram


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return 42
