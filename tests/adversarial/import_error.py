# The program imports a package the guest does not have.
# expect-kind: import
# expect-message: ModuleNotFoundError: No module named 'torch_is_not_in_the_sandbox'
import torch_is_not_in_the_sandbox  # noqa: F401

from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return MemoryPayload()
