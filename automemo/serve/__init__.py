"""Serving an exported memo program where agents live: an MCP server (stdio, streamable HTTP)
and a REST API over durable memories, one per user (`automemo serve DIR`), and the commands on a
server's state folder (`automemo memory ...`)."""
