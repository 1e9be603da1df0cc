"""The serving defaults, in one place: `automemo serve`'s flags and `MemoryService` read them."""

DEFAULT_USER = ""          # the namespace of calls that name no user
MAX_OPEN_NAMESPACES = 8    # users whose memory is open at once; each is a sandbox session (a guest process)
SNAPSHOT_EVERY = 200       # a namespace snapshots after this many new log entries (and when it closes)

# --engine ray (`automemo serve DIR --engine ray`; serve/ray_engine.py)
RAY_REPLICAS = 2              # memory replicas; namespaces are spread over them by Ray Serve's multiplexing
RAY_REPLICA_CPUS = 1.0        # Ray CPUs reserved per memory replica: the guests' work, so Ray spreads replicas over cores
RAY_MAX_ONGOING = 64          # calls a replica takes at once (calls into one namespace still run one at a time);
                              # Ray's default of 5 would queue 8 users' calls at the router
LEASE_WAIT_SECONDS = 0.2      # a replica opening a namespace waits this long for its lease before answering "not
                              # the owner" (long enough for its own eviction of that namespace to finish)
ROUTE_ATTEMPTS = 12           # tries of a call whose namespace another replica holds, or whose replica died
ROUTE_BACKOFF_SECONDS = 0.05  # the first retry's wait, doubled each time up to 1 s (about 8 s in all)
