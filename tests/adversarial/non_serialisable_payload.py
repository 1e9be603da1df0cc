# retrieve returns a payload dict holding an object JSON cannot carry.
# expect-kind: bad-result
# expect-message: metadata.handle: expected JSON data
import threading

from automemo.contract import MemoProgram


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return {"text": "see metadata", "metadata": {"handle": threading.Lock()}}
