"""The HTTP edge: `app` (the Starlette app: REST, MCP at /mcp, /healthz, /openapi.json), `guard`
(what is checked before a handler: host, origin, token, rate, body size), `policy` (the guard's
settings from the flags), `rate_limit` (token buckets per caller), `openapi` (the description
served at /openapi.json)."""
