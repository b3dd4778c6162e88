"""The order in which main items are offered to one annotator — pure assignment strategies.

`assignment.py` takes the order returned here and reserves the first item it can lock; this module only
decides preference, from plain data: the stage's items (with subject and category), what the annotator
has already labelled, and how many labels each item has. Three strategies:

- ``"order"``: the items in the order given (import order), so items fill up one after another;
- ``"random"``: a fixed pseudo-random order per (seed, annotator) — the same annotator always sees the
  same order, whatever others do and however the caller sorted the items; different annotators differ;
- ``"balanced"``: the least-covered subject × category cell first, so labels spread evenly over the cells
  while the stage runs (coverage = labels so far / items in the cell).

Items the annotator already labelled, and items that already have ``overlap`` labels, are never offered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

IN_ORDER = "order"
RANDOM = "random"
BALANCED = "balanced"
STRATEGIES: tuple[str, ...] = (IN_ORDER, RANDOM, BALANCED)


@dataclass(frozen=True)
class CandidateItem:
    """A main item of the stage, as far as assignment needs to know it."""

    item_id: Hashable
    subject: str = ""
    category: str = ""


def order_items(
    strategy: str,
    items: Sequence[CandidateItem],
    *,
    already_labelled: Collection[Hashable] = (),
    label_counts: Mapping[Hashable, int] | None = None,
    overlap: int | None = None,
    seed: int | str = 0,
    annotator: Hashable = "",
) -> list[Hashable]:
    """Item ids in the order to offer them to ``annotator``, best first.

    ``items`` should be every main item of the stage (the balanced strategy measures each cell's coverage
    over all of them, full ones included). ``label_counts`` gives labels per item id (missing ids have
    none; reservations may be counted too). ``overlap`` — the labels an item needs — drops full items.
    ``seed`` and ``annotator`` only matter to the random strategy.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    counts = label_counts or {}
    done = set(already_labelled)

    def offerable(item: CandidateItem) -> bool:
        if item.item_id in done:
            return False
        return overlap is None or counts.get(item.item_id, 0) < overlap

    if strategy == IN_ORDER:
        return [item.item_id for item in items if offerable(item)]
    if strategy == RANDOM:
        open_items = [item for item in items if offerable(item)]
        return [item.item_id for item in sorted(open_items, key=lambda item: _random_rank(seed, annotator, item))]
    return _balanced_order(items, offerable, counts)


def _random_rank(seed: int | str, annotator: Hashable, item: CandidateItem) -> bytes:
    # A hash per (seed, annotator, item) rather than a shuffle: each annotator's order is a fixed
    # permutation of the whole stage, so it does not change as other items fill up or leave the list,
    # and it does not depend on the order the database returned the items in.
    return hashlib.sha256(f"{seed}\x1f{annotator}\x1f{item.item_id}".encode()).digest()


def _balanced_order(
    items: Sequence[CandidateItem], offerable: Callable[[CandidateItem], bool], counts: Mapping[Hashable, int]
) -> list[Hashable]:
    """Repeatedly take an item from the cell with the lowest coverage, as if this annotator labelled it.

    Coverage of a subject × category cell = labels in the cell / items in the cell, so large and small
    cells are compared fairly. Ties go to the cell met first in ``items``. Within a cell the item with the
    fewest labels comes first (then the order given), spreading labels at the item level too.
    """
    cell_items: dict[tuple[str, str], int] = {}
    cell_labels: dict[tuple[str, str], int] = {}
    queues: dict[tuple[str, str], list[tuple[int, int, Hashable]]] = {}
    for position, item in enumerate(items):
        cell = (item.subject, item.category)
        cell_items[cell] = cell_items.get(cell, 0) + 1
        cell_labels[cell] = cell_labels.get(cell, 0) + counts.get(item.item_id, 0)
        if offerable(item):
            queues.setdefault(cell, []).append((counts.get(item.item_id, 0), position, item.item_id))
    for queue in queues.values():
        queue.sort(reverse=True)  # fewest labels, then earliest position, at the end: pop() takes it
    first_seen = {cell: rank for rank, cell in enumerate(cell_items)}

    order: list[Hashable] = []
    while queues:
        cell = min(queues, key=lambda c: (Fraction(cell_labels[c], cell_items[c]), first_seen[c]))
        _, _, item_id = queues[cell].pop()
        order.append(item_id)
        cell_labels[cell] += 1
        if not queues[cell]:
            del queues[cell]
    return order
