"""The serving defaults, in one place: `automemo serve`'s flags and `MemoryService` read them."""

DEFAULT_USER = ""          # the namespace of calls that name no user
MAX_OPEN_NAMESPACES = 8    # users whose memory is open at once; each is a sandbox session (a guest process)
SNAPSHOT_EVERY = 200       # a namespace snapshots after this many new log entries (and when it closes)
