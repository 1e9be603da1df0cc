"""Serving an exported memo program where agents live: an MCP server (stdio, streamable HTTP)
and a REST API over one durable, serialised memory (`automemo serve DIR`)."""
