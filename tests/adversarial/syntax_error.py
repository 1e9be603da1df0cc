# The program is not valid Python (an LLM stopped mid-line).
# expect-kind: import
# expect-message: SyntaxError: .*line 9
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        self.notes = [episode.task_id
    def retrieve(self, task):
        return MemoryPayload()
