"""Tables of annotation."""
