"""Possible duplicate recruits: participant ids that came from one browser or one client address are one person.

The rule is transitive (an id sharing a browser with a second, which shares an address with a third, makes three);
an empty mark (no cookie, no address) joins nobody, and neither does an address behind more than
`SHARED_ADDRESS_RECRUITS` recruits: that is a shared network (a campus, a carrier's NAT), not one person."""

from __future__ import annotations

from collections.abc import Iterable

SHARED_ADDRESS_RECRUITS = 5


def duplicate_groups(marks: Iterable[tuple[int, str, str]]) -> dict[int, frozenset[int]]:
    """For each recruit id of ``marks`` — (recruit id, browser mark, address mark) per visit — the other recruit ids
    flagged as the same person (empty when none)."""
    marks = list(marks)
    behind: dict[str, set[int]] = {}
    for recruit, _, address in marks:
        if address:
            behind.setdefault(address, set()).add(recruit)
    parent: dict[int, int] = {}

    def find(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    first_of: dict[tuple[str, str], int] = {}
    for recruit, browser, address in marks:
        parent.setdefault(recruit, recruit)
        for mark in (("browser", browser), ("address", address)):
            if not mark[1] or (mark[0] == "address" and len(behind[mark[1]]) > SHARED_ADDRESS_RECRUITS):
                continue
            other = first_of.setdefault(mark, recruit)
            root_a, root_b = find(recruit), find(other)
            if root_a != root_b:
                parent[max(root_a, root_b)] = min(root_a, root_b)
    members: dict[int, set[int]] = {}
    for recruit in parent:
        members.setdefault(find(recruit), set()).add(recruit)
    return {recruit: frozenset(members[find(recruit)] - {recruit}) for recruit in parent}
