"""`automemo serve --engine ray`: the service on a Ray cluster. `engine` starts it, `ingress`
routes each call to the replica holding the user's memory, `replica` holds memories (one per
multiplexed model id), `lease` gives one process at a time a user's folder (a fencing token),
`leased_memory` is a `UserMemory` held under that lease, `lease_checked_writes` the folder's
writes, each checked against the lease first."""
