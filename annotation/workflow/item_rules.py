"""Which items are a stage's main work — the item rule, pure: plain ids in, plain ids out.

A researcher picks one rule per stage (`StageLabelling.item_rule`):

- ``"all"``: every item of the project;
- ``"settled"``: the items a named *earlier* stage settled with one of the given values of one of its
  questions (SafeTutors, Appendix D: stage 2 labels what stage 1 found valid);
- ``"list"``: an explicit list of items, in the order given.

Whatever the rule, two kinds of item never become main work: training items (a pilot or qualification
item, or a worked example, of this stage or of a stage sharing a question with it — their gold is what
annotators are tested against), and items a researcher removed for a cross-stage conflict at an earlier
stage (removed means removed from the rest of the pipeline). `assignment.main_items_sync` keeps a stage's
`MainItem` rows equal to what `wanted_main_items` returns. No Django here.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

ALL = "all"
SETTLED = "settled"
LIST = "list"
RULES: tuple[str, ...] = (ALL, SETTLED, LIST)


@dataclass(frozen=True)
class ItemRule:
    """A stage's item rule, as plain data."""

    rule: str = ALL
    source_stage: Hashable | None = None
    source_values: tuple[str, ...] = ()
    item_ids: tuple[Hashable, ...] = ()


@dataclass(frozen=True)
class StageRef:
    """A stage as far as validating a rule needs it: its id, its order and its questions' values."""

    id: Hashable
    order: int
    name: str = ""
    questions: Mapping[Hashable, Sequence[str]] = field(default_factory=dict)  # question id → its values


def wanted_main_items(
    rule: ItemRule,
    *,
    project_items: Sequence[Hashable],
    settled: Mapping[Hashable, str] | None = None,
    training: Collection[Hashable] = (),
    removed: Collection[Hashable] = (),
) -> list[Hashable]:
    """The stage's main items in hand-out order.

    ``project_items``: the project's item ids in import order. ``settled``: for the settled rule, item id →
    the value the source stage settled it with. ``training``: items that are never main work here;
    ``removed``: items removed for a conflict at an earlier stage.
    """
    if rule.rule not in RULES:
        raise ValueError(f"item rule must be one of {RULES}, got {rule.rule!r}")
    closed = set(training) | set(removed)
    if rule.rule == ALL:
        chosen = project_items
    elif rule.rule == SETTLED:
        values = set(rule.source_values)
        chosen = [item for item in project_items if (settled or {}).get(item) in values]
    else:
        known = set(project_items)
        chosen = [item for item in dict.fromkeys(rule.item_ids) if item in known]
    return [item for item in chosen if item not in closed]


def rule_problems(
    rule: ItemRule,
    *,
    stage: StageRef,
    stages: Sequence[StageRef],
    source_question: Hashable | None = None,
    project_items: Collection[Hashable] = (),
) -> dict[str, str]:
    """What is wrong with a rule for ``stage`` (field → message); empty when it can be stored.

    ``stages`` are the project's stages; ``source_question`` is the question of the source stage whose
    settled answer the settled rule reads (the caller picks the default).
    """
    if rule.rule not in RULES:
        return {"rule": f"Unknown item rule {rule.rule!r}; one of {', '.join(RULES)}."}
    problems: dict[str, str] = {}
    if rule.rule == SETTLED:
        source = next((s for s in stages if s.id == rule.source_stage), None)
        if rule.source_stage is None:
            problems["source_stage"] = "Name the earlier stage whose settled items this stage takes."
        elif source is None:
            problems["source_stage"] = f"There is no stage {rule.source_stage} in this project."
        elif source.order >= stage.order:
            problems["source_stage"] = (
                f"Stage {source.order} ({source.name}) is not earlier than this stage ({stage.order}); "
                "a stage takes its items from an earlier one."
            )
        if source is not None and "source_stage" not in problems:
            if source_question is None or source_question not in source.questions:
                problems["source_question"] = f"Name one of stage {source.order}'s questions."
            else:
                allowed = list(source.questions[source_question])
                unknown = [value for value in rule.source_values if value not in allowed]
                if not rule.source_values:
                    problems["source_values"] = f"Name at least one value ({', '.join(allowed)})."
                elif unknown:
                    problems["source_values"] = (
                        f"Not among the question's choices: {', '.join(map(str, unknown))} "
                        f"(choices: {', '.join(allowed)})."
                    )
    elif rule.rule == LIST:
        if not rule.item_ids:
            problems["item_ids"] = "List at least one item."
        else:
            known = set(project_items)
            unknown = [item for item in dict.fromkeys(rule.item_ids) if item not in known]
            if unknown:
                more = f" (and {len(unknown) - 10} more)" if len(unknown) > 10 else ""
                problems["item_ids"] = f"No such items in this project: {', '.join(map(str, unknown[:10]))}{more}."
    return problems
