"""The serving defaults, in one place: `automemo serve`'s flags, `HttpPolicy`, `RequestLimits`
and `MemoryService` read them from here and nowhere else."""

# --- where and how fast ------------------------------------------------------------------------
HOST = "127.0.0.1"         # loopback: any other bind needs a token (a reachable memory must be asked for)
PORT = 8765
RATE_LIMIT = 1200          # requests a minute per token, on a server with tokens (none without: every
                           # caller of a loopback server without tokens is a local process)

# --- whose memory ------------------------------------------------------------------------------
# The namespace of calls that name no user. Never "": a program reads an empty user as "every
# row", and a call that names nobody must not search the shared base or anyone else.
DEFAULT_USER = "default"
MAX_OPEN_NAMESPACES = 8    # users whose memory is open at once; each is a sandbox session (a guest process)
MAX_KNOWN_NAMESPACES = 1024  # closed namespaces whose (small) table entries are kept; older ones are pruned
SNAPSHOT_EVERY = 200       # a namespace snapshots after this many new log entries (and when it closes)

# --- one request ------------------------------------------------------------------------------
MAX_BODY_BYTES = 8_000_000     # one HTTP request body (images travel inside it as data URLs)
MAX_IMAGES = 8                 # images per recall
MAX_EPISODE_IMAGES = 64        # images per remembered episode (a screenshot per step)
MAX_IMAGE_BYTES = 4_000_000    # one image file (base64-decoded)
MAX_IMAGE_PIXELS = 25_000_000  # one image's width x height (a 5000 x 5000 screenshot)
MAX_TEXT_CHARS = 200_000       # an instruction, or all of a chat's messages together
MAX_STEPS = 2_000              # steps of one episode
# Short fields are copied into every step (a turn's ref, its time) and every log line: a long one
# multiplies. These are far above any real id, name or timestamp.
MAX_ID_CHARS = 200             # task_id, user, role
MAX_TIME_CHARS = 100           # time
MAX_METADATA_CHARS = 10_000    # a recall's question-time metadata, as JSON
IMAGE_WORKERS = 1              # processes decoding requests' images: a flood of large images queues on them, the
                               # other cores stay with the other tenants' calls
IMAGE_WORKER_NICE = 19         # their niceness, as a process and as a session's scheduling group: image work
                               # gets the CPU the other tenants' calls leave (10 and 19 measured in docs/serve.md)

# --- one namespace (a user) ------------------------------------------------------------------
MAX_USER_EPISODES = 100_000    # live episodes; a remember past it is refused with 429
MAX_USER_BYTES = 2_000_000_000  # its log and stored images together; a remember past it is refused with 413

# --engine ray (`automemo serve DIR --engine ray`; serve/cluster/engine.py)
RAY_REPLICAS = 2              # memory replicas; namespaces are spread over them by Ray Serve's multiplexing
RAY_REPLICA_CPUS = 1.0        # Ray CPUs reserved per memory replica: the guests' work, so Ray spreads replicas over cores
RAY_MAX_ONGOING = 64          # calls a replica takes at once (calls into one namespace still run one at a time);
                              # Ray's default of 5 would queue 8 users' calls at the router
LEASE_WAIT_SECONDS = 0.2      # a replica opening a namespace waits this long for its lease before answering "not
                              # the owner" (long enough for its own eviction of that namespace to finish)
ROUTE_ATTEMPTS = 12           # tries of a call whose namespace another replica holds, or whose replica died
ROUTE_BACKOFF_SECONDS = 0.05  # the first retry's wait, doubled each time up to 1 s (about 8 s in all)
