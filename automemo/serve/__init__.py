"""Serving an exported memo program where agents live: an MCP server (stdio, streamable HTTP)
and a REST API over durable memories, one per user (`automemo serve DIR`), and the commands on a
server's state folder (`automemo memory ...`). docs/serve.md is the user's guide. A map:

| the service | |
|---|---|
| `service` | `MemoryService`: what every face calls (recall, remember, feedback, forget, export, import) |
| `user_memory` | `UserMemory`: one user's memory: its program in its own sandbox session, its log, images, cache, versions |
| `memory_pool` | `UserMemoryPool`: the user memories a process holds open (least recently used closed first) |
| `trial_memory` | a program on trial beside the live one: it sees every remember, and recalls answer with the interleave |
| `interleave` | team-draft interleaving of two ranked lists, and one recall's credit from the agent's feedback |
| `access` | bearer tokens and which user a request acts on |
| `defaults` | every serving default, in one place |

| what a client sends | |
|---|---|
| `request_model` | the one typed definition of a request, from which the checks, MCP tools and OpenAPI derive |
| `requests` | the checks of a recall, remember, feedback, forget, import |
| `transcript` | a conversation sent as one string, cut into turns |
| `transfer` | a user's episodes and recalls out and in (export, import), each imported line checked as a remember |
| `parsing_workers` | where a request carrying images is parsed: worker processes at background priority |
| `mcp_face` | the MCP tools and resource |

| wings | |
|---|---|
| `http/` | the HTTP edge: the app, its guard and rate limit, OpenAPI |
| `storage/` | a user's folder on disk: log, images, recalls, versions, keys |
| `cluster/` | `--engine ray`: ingress, replicas, and the lease under which a replica holds a user's memory |

One word for one thing: a user's memory is a `UserMemory` wherever it is held (`UserMemoryPool`
in one process, `cluster.leased_memory.LeasedUserMemory` on a replica); a namespace is that
memory's folder on disk (`users/<key>/`)."""
