"""Reads of audits (one module per area), shared by views, the API and commands."""
