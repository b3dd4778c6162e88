"""Model calls: the client (ledger, limits, retries) and its providers (OpenAI-compatible, simulation)."""
