"""What stands behind one contrast cell: dialogues planned, done and failed, tutor turns left out, pairs used.

A cell (tutor, domain, contrast, metric) draws on the dialogues of the contrast's conditions on both
sides. Counts come per (tutor, domain, condition) for dialogues and per (tutor, domain, condition, metric)
for judged tutor turns (``audits.selectors.results.audit_exclusion_counts``); this module sums them over a
contrast's conditions, so every table row, tooltip, export and the report's exclusions section says the
same thing. Pure Python; no Django.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, fields

DIALOGUE_STATES: tuple[str, ...] = ("planned", "done", "failed", "pending", "cancelled")
TURN_STATES: tuple[str, ...] = ("scored", "unparsable", "failed", "not_applicable")


@dataclass(frozen=True)
class ExclusionCounts:
    """Counts per (tutor, domain, condition): ``dialogues[(t, d, c)][state]`` and
    ``turns[(t, d, c, metric)][state]`` (missing keys are zero)."""

    dialogues: Mapping[tuple[Hashable, Hashable, Hashable], Mapping[str, int]]
    turns: Mapping[tuple[Hashable, Hashable, Hashable, Hashable], Mapping[str, int]]


@dataclass(frozen=True)
class CellExclusions:
    dialogues_planned: int
    dialogues_done: int
    dialogues_failed: int
    dialogues_unfinished: int  # pending, running or cancelled
    turns_scored: int
    turns_unparsable: int
    turns_failed: int
    turns_not_applicable: int
    pairs_used: int

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def text(self) -> str:
        """One line for a tooltip or a table cell."""
        turns = ""
        if self.turns_unparsable or self.turns_failed or self.turns_not_applicable:
            turns = (
                f"; tutor turns left out: {self.turns_unparsable} unparsable, {self.turns_failed} judge failed, "
                f"{self.turns_not_applicable} not applicable"
            )
        return (
            f"{self.pairs_used} pairs used; dialogues {self.dialogues_done} done of {self.dialogues_planned} planned, "
            f"{self.dialogues_failed} failed, {self.dialogues_unfinished} unfinished{turns}"
        )


EXCLUSION_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CellExclusions))


def cell_exclusions(
    counts: ExclusionCounts,
    *,
    tutor: Hashable,
    domain: Hashable,
    conditions: Iterable[Hashable],
    metric: Hashable,
    pairs_used: int,
) -> CellExclusions:
    """The counts of one cell, summed over the conditions of both sides of its contrast."""
    dialogues = dict.fromkeys(DIALOGUE_STATES, 0)
    turns = dict.fromkeys(TURN_STATES, 0)
    for condition in dict.fromkeys(conditions):
        for state, n in counts.dialogues.get((tutor, domain, condition), {}).items():
            dialogues[state] = dialogues.get(state, 0) + n
        for state, n in counts.turns.get((tutor, domain, condition, metric), {}).items():
            turns[state] = turns.get(state, 0) + n
    return CellExclusions(
        dialogues_planned=dialogues["planned"],
        dialogues_done=dialogues["done"],
        dialogues_failed=dialogues["failed"],
        dialogues_unfinished=dialogues["planned"] - dialogues["done"] - dialogues["failed"],
        turns_scored=turns["scored"],
        turns_unparsable=turns["unparsable"],
        turns_failed=turns["failed"],
        turns_not_applicable=turns["not_applicable"],
        pairs_used=int(pairs_used),
    )


def total_exclusions(counts: ExclusionCounts) -> dict[str, int]:
    """Audit-wide totals for the methods box and the report's exclusions section (turns: per judged turn
    and metric)."""
    totals = {f"dialogues_{state}": 0 for state in DIALOGUE_STATES}
    totals.update({f"turn_scores_{state}": 0 for state in TURN_STATES})
    for by_state in counts.dialogues.values():
        for state, n in by_state.items():
            totals[f"dialogues_{state}"] = totals.get(f"dialogues_{state}", 0) + n
    for by_state in counts.turns.values():
        for state, n in by_state.items():
            totals[f"turn_scores_{state}"] = totals.get(f"turn_scores_{state}", 0) + n
    return totals
