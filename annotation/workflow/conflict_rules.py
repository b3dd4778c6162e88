"""Cross-stage conflicts — pure detection and the count of their dispositions, for `conflicts.py`.

An item resolved *positive* at one stage and *negative* at a later one is a conflict; in SafeTutors, a
question judged valid at stage 1 (domain validity) whose interaction is judged misaligned with its risk
category at stage 2. A researcher then removes the item or retains it with a "cross-category" flag, and
the report states the counts in the paper's form: "57 conflicts: 21 removed, 36 retained".

What is positive depends on the stage, so each stage names its positive values; by default every other
resolved value is negative, or a stage may also name its negative values, leaving the rest (e.g. "not
applicable") neither. Unresolved items (final value ``None``) are not judged. No Django here.

The rate's denominator is the items that *could* be a conflict: those settled at two (or more) of the
compared stages (`items_compared`) — not the items of any one stage, which may hold items another stage
never saw (stage 2 takes only what stage 1 kept) or may not be compared at all.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

REMOVED = "removed"
RETAINED_WITH_FLAG = "retained_with_flag"
DISPOSITIONS: tuple[str, ...] = (REMOVED, RETAINED_WITH_FLAG)


@dataclass(frozen=True)
class CrossStageConflict:
    """An item positive at ``positive_stage`` and negative at the later ``negative_stage``."""

    item_id: Hashable
    positive_stage: Hashable
    positive_value: Hashable
    negative_stage: Hashable
    negative_value: Hashable


def find_conflicts(
    final_values: Mapping[tuple[Hashable, Hashable], Hashable | None],
    positive_values: Mapping[Hashable, Collection[Hashable]],
    *,
    negative_values: Mapping[Hashable, Collection[Hashable]] | None = None,
    stage_order: Sequence[Hashable] | None = None,
) -> list[CrossStageConflict]:
    """Items positive at an earlier stage and negative at a later one, one conflict per item.

    ``final_values`` maps (item id, stage) → the resolved value (``None`` while unresolved).
    ``positive_values`` maps each stage to its positive values; ``negative_values`` optionally names a
    stage's negative values. ``stage_order`` lists the stages from first to last (default: the stages of
    ``positive_values`` sorted). Each conflict pairs the item's earliest positive stage with the first
    negative stage after it; conflicts come in the order items first appear in ``final_values``.
    """
    order = list(stage_order) if stage_order is not None else sorted(positive_values)
    rank = {stage: position for position, stage in enumerate(order)}
    negatives = negative_values or {}
    stages_seen = {stage for _, stage in final_values}
    if stages_seen - set(rank):
        raise ValueError(f"stages missing from stage_order: {sorted(map(str, stages_seen - set(rank)))}")
    if stages_seen - set(positive_values):
        raise ValueError(f"stages without positive values: {sorted(map(str, stages_seen - set(positive_values)))}")

    by_item: dict[Hashable, list[tuple[int, Hashable, Hashable]]] = {}
    for (item_id, stage), value in final_values.items():
        if value is not None:
            by_item.setdefault(item_id, []).append((rank[stage], stage, value))

    conflicts = []
    for item_id, stages in by_item.items():
        stages.sort(key=lambda entry: entry[0])
        first_positive = next((entry for entry in stages if _polarity(entry, positive_values, negatives) is True), None)
        if first_positive is None:
            continue
        later_negative = next(
            (
                entry
                for entry in stages
                if entry[0] > first_positive[0] and _polarity(entry, positive_values, negatives) is False
            ),
            None,
        )
        if later_negative is not None:
            conflicts.append(
                CrossStageConflict(
                    item_id=item_id,
                    positive_stage=first_positive[1],
                    positive_value=first_positive[2],
                    negative_stage=later_negative[1],
                    negative_value=later_negative[2],
                )
            )
    return conflicts


def items_compared(final_values: Mapping[tuple[Hashable, Hashable], Hashable | None]) -> int:
    """How many items have a settled value at two or more stages (``final_values`` as for find_conflicts)."""
    stages_per_item: dict[Hashable, int] = {}
    for (item_id, _), value in final_values.items():
        if value is not None:
            stages_per_item[item_id] = stages_per_item.get(item_id, 0) + 1
    return sum(1 for count in stages_per_item.values() if count >= 2)


def _polarity(
    entry: tuple[int, Hashable, Hashable],
    positive_values: Mapping[Hashable, Collection[Hashable]],
    negative_values: Mapping[Hashable, Collection[Hashable]],
) -> bool | None:
    """True if positive at that stage, False if negative, None if the stage counts it as neither."""
    _, stage, value = entry
    if value in positive_values[stage]:
        return True
    if stage not in negative_values:
        return False
    return False if value in negative_values[stage] else None


@dataclass(frozen=True)
class DispositionCounts:
    """How the conflicts were disposed of, for the report."""

    conflicts: int
    removed: int
    retained_with_flag: int
    undecided: int
    n_items: int | None = None
    n_items_basis: str = ""  # what the items are, e.g. "settled at both compared stages"

    @property
    def rate(self) -> float | None:
        return self.conflicts / self.n_items if self.n_items else None

    def describe(self) -> str:
        """The paper's form, e.g. "57 conflicts: 21 removed, 36 retained" (or "… in 1,500 items (3.8%): …")."""
        noun = "conflict" if self.conflicts == 1 else "conflicts"
        head = f"{self.conflicts:,} {noun}"
        if self.n_items:
            basis = f" {self.n_items_basis}" if self.n_items_basis else ""
            head += f" in {self.n_items:,} items{basis} ({100 * self.conflicts / self.n_items:.1f}%)"
        parts = [f"{self.removed:,} removed", f"{self.retained_with_flag:,} retained"]
        if self.undecided:
            parts.append(f"{self.undecided:,} undecided")
        return f"{head}: {', '.join(parts)}"


def count_dispositions(
    dispositions: Iterable[str | None], *, n_items: int | None = None, n_items_basis: str = ""
) -> DispositionCounts:
    """Count one disposition per conflict (``None`` while the researcher has not decided)."""
    tally = {REMOVED: 0, RETAINED_WITH_FLAG: 0, None: 0}
    for disposition in dispositions:
        if disposition not in tally:
            raise ValueError(f"disposition must be one of {DISPOSITIONS} or None, got {disposition!r}")
        tally[disposition] += 1
    return DispositionCounts(
        conflicts=sum(tally.values()),
        removed=tally[REMOVED],
        retained_with_flag=tally[RETAINED_WITH_FLAG],
        undecided=tally[None],
        n_items=n_items,
        n_items_basis=n_items_basis,
    )
