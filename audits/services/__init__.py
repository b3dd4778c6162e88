"""Writes of audits (one module per area), shared by views, the API, tasks and commands."""
