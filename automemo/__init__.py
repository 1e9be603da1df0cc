"""AutoMMemo: search for a multimodal agent's memory mechanism as an executable memo program.

Kept import-free on purpose: the sandbox guest imports `automemo.contract` and
`automemo.toolkit.guest` with nothing but the guest image's few packages installed.
"""

__version__ = "0.1.0"
