"""Tables of audits."""
