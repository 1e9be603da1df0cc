# A program that resolves a host name (the first step of any exfiltration). No network, no DNS.
# expect-kind: exception
# expect-message: gaierror
import socket

from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        self.addresses = socket.getaddrinfo("example.com", 443)

    def retrieve(self, task):
        return MemoryPayload(text=repr(self.addresses))
