# update writes through a null pointer with ctypes: the guest dies of SIGSEGV.
# expect-kind: crash
# expect-message: SIGSEGV
import ctypes

from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        ctypes.memmove(0, b"boom", 4)

    def retrieve(self, task):
        return MemoryPayload()
