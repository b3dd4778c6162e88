"""The statements that main labelling runs on every "next item" and "submit", written as SQL.

With dozens of annotators at once these two requests are most of the site's traffic, and building a
query through the ORM costs 3–4 times the CPU of the same statement as SQL (`benchmarks/orm_query_cost.py`;
`benchmarks/RESULTS.md`, "Labelling under load"). So the statements are written once below and kept
portable: the same text runs on PostgreSQL and on SQLite (≥ 3.35, for ``RETURNING``). Reads go through
`Model.objects.raw`, which still converts column values the way each backend needs and builds model
instances; datetimes are passed through `connection.ops.adapt_datetimefield_value`, as the ORM would.
Row locks (``FOR UPDATE … SKIP LOCKED``) are added only where the database has them; on SQLite every
transaction already holds the write lock (``BEGIN IMMEDIATE``, see settings).

What the statements are for — the slot counting, the reservations, the resolution — is documented where
they are used (`services.assignment`, `services.labelling`, `services.resolution`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from annotation.models import (
    Assignment,
    CrossStageConflict,
    Enrollment,
    Item,
    Label,
    LabelQuestion,
    MainItem,
    Phase,
    Stage,
    StageLabelling,
)
from annotation.workflow import item_rules


def _row_lock(of: str) -> str:
    """``FOR UPDATE OF <alias> SKIP LOCKED`` where the database can lock rows, else nothing."""
    return f" FOR UPDATE OF {of} SKIP LOCKED" if connection.features.has_select_for_update_skip_locked else ""


def _wait_lock(of: str) -> str:
    """``FOR UPDATE OF <alias>`` (waits for the holder) where the database can lock rows, else nothing."""
    return f" FOR UPDATE OF {of}" if connection.features.has_select_for_update else ""


def _flag(value) -> bool | None:
    """A boolean read outside a model field (SQLite returns 0/1)."""
    return None if value is None else bool(value)


def _json(model, name: str, value):
    """A JSON column read outside its model field, converted as the field converts it."""
    return model._meta.get_field(name).from_db_value(value, None, connection)


@dataclass(frozen=True)
class LabellingAccess:
    """What deciding "may this annotator label the stage's main items now?" needs, read in one statement."""

    stage: Stage  # with its assignment settings cached (`selectors.labelling_settings.labelling_settings`)
    enrolled: bool
    gate_passed: bool | None
    replaced: bool
    guideline_version: int | None  # the stage's current guideline, None when it has none
    confirmed_current_guideline: bool
    main_submitted: int  # main items this annotator submitted in the stage


_ACCESS_SQL = """
SELECT s.*,
       e.id AS enrollment_pk,
       e.status AS enrollment_status,
       e.gate_passed AS enrollment_gate_passed,
       g.id AS guideline_pk,
       g.version AS guideline_version,
       EXISTS (SELECT 1 FROM annotation_guidelineconfirmation c
               WHERE c.enrollment_id = e.id AND c.guideline_id = g.id) AS guideline_confirmed,
       (SELECT COUNT(*) FROM annotation_assignment a
        WHERE a.stage_id = s.id AND a.annotator_id = %s AND a.phase = %s
          AND a.submitted_at IS NOT NULL) AS main_submitted,
       l.id AS labelling_pk,
       l.strategy AS labelling_strategy,
       l.seed AS labelling_seed,
       l.reservation_minutes AS labelling_reservation_minutes,
       l.revision_minutes AS labelling_revision_minutes,
       l.revision_items AS labelling_revision_items,
       l.item_rule AS labelling_item_rule,
       l.source_stage_id AS labelling_source_stage_id,
       l.source_question_id AS labelling_source_question_id,
       l.source_values AS labelling_source_values,
       l.item_ids AS labelling_item_ids
FROM annotation_stage s
LEFT JOIN annotation_enrollment e ON e.stage_id = s.id AND e.user_id = %s
LEFT JOIN annotation_guideline g ON g.id = (
    SELECT g2.id FROM annotation_guideline g2 WHERE g2.stage_id = s.id ORDER BY g2.version DESC LIMIT 1)
LEFT JOIN annotation_stagelabelling l ON l.stage_id = s.id
WHERE s.id = %s
"""


def labelling_access(*, stage_id: int, annotator_id: int) -> LabellingAccess | None:
    """The stage (None when there is no such stage), the annotator's enrolment state and their count."""
    row = next(iter(Stage.objects.raw(_ACCESS_SQL, [annotator_id, Phase.MAIN, annotator_id, stage_id])), None)
    if row is None:
        return None
    settings = None
    if row.labelling_pk is not None:
        settings = StageLabelling(
            id=row.labelling_pk,
            stage=row,
            strategy=row.labelling_strategy,
            seed=row.labelling_seed,
            reservation_minutes=row.labelling_reservation_minutes,
            revision_minutes=row.labelling_revision_minutes,
            revision_items=row.labelling_revision_items,
            item_rule=row.labelling_item_rule,
            source_stage_id=row.labelling_source_stage_id,
            source_question_id=row.labelling_source_question_id,
            source_values=_json(StageLabelling, "source_values", row.labelling_source_values),
            item_ids=_json(StageLabelling, "item_ids", row.labelling_item_ids),
        )
    # What `stage.labelling` would load; None makes it raise DoesNotExist, as a missing row does.
    Stage.labelling.related.set_cached_value(row, settings)
    return LabellingAccess(
        stage=row,
        enrolled=row.enrollment_pk is not None,
        gate_passed=_flag(row.enrollment_gate_passed),
        replaced=row.enrollment_status == Enrollment.Status.REPLACED,
        guideline_version=row.guideline_version,
        confirmed_current_guideline=bool(row.guideline_confirmed),
        main_submitted=row.main_submitted,
    )


def open_reservation(*, stage_id: int, annotator_id: int) -> Assignment | None:
    """The annotator's main assignment in the stage that is handed out and not submitted (the oldest)."""
    sql = (
        "SELECT a.* FROM annotation_assignment a WHERE a.stage_id = %s AND a.annotator_id = %s"
        " AND a.phase = %s AND a.submitted_at IS NULL ORDER BY a.id LIMIT 1"
    )
    return next(iter(Assignment.objects.raw(sql, [stage_id, annotator_id, Phase.MAIN])), None)


def lock_expired_reservations(*, stage_id: int, now, limit: int) -> list[tuple[int, int]]:
    """(assignment id, item id) of reservations that expired unsubmitted, locked, in item order; rows a
    submit is holding are skipped."""
    sql = (  # noqa: S608 — constant text; every value is a parameter
        "SELECT a.id, a.item_id FROM annotation_assignment a WHERE a.stage_id = %s AND a.phase = %s"
        " AND a.submitted_at IS NULL AND a.reserved_until < %s ORDER BY a.item_id LIMIT %s"
    ) + _row_lock("a")
    with connection.cursor() as cursor:
        cursor.execute(sql, [stage_id, Phase.MAIN, _at(now), limit])
        return [tuple(row) for row in cursor.fetchall()]


# Main-item rows with a free slot that this annotator (and anyone flagged as the same person) never had, and not
# in the caller's skip list.
_OPEN_FOR_ANNOTATOR = (
    " WHERE m.stage_id = %s AND m.has_free_slot AND m.slots_taken < %s"
    " AND m.item_id NOT IN (SELECT a.item_id FROM annotation_assignment a"
    " WHERE a.stage_id = %s AND a.annotator_id IN ({annotators}))"
)


def _open_for_annotator(
    *, stage_id: int, annotator_id: int, overlap: int, skip: set[int], same_person: tuple[int, ...] = ()
) -> tuple[str, list]:
    annotators = [annotator_id, *same_person]
    skipped = f" AND m.id NOT IN ({', '.join(['%s'] * len(skip))})" if skip else ""
    where = _OPEN_FOR_ANNOTATOR.format(annotators=", ".join(["%s"] * len(annotators)))
    return where + skipped, [stage_id, overlap, stage_id, *annotators, *sorted(skip)]


def lock_first_open_item(
    *, stage_id: int, annotator_id: int, overlap: int, skip: set[int], same_person: tuple[int, ...] = ()
) -> Item | None:
    """The item of the first open main-item row (position order) that this annotator (and anyone in
    ``same_person``) never had and no other transaction holds, its row locked; ``item.main_item_pk`` is that
    row's id. The partial index on open rows (``has_free_slot``) makes this a short index walk however many
    items are full."""
    where, params = _open_for_annotator(
        stage_id=stage_id, annotator_id=annotator_id, overlap=overlap, skip=skip, same_person=same_person
    )
    # Constant text and placeholders; every value is a parameter.
    sql = (
        "SELECT i.*, m.id AS main_item_pk FROM annotation_mainitem m JOIN annotation_item i ON i.id = m.item_id"  # noqa: S608
        + where
        + " ORDER BY m.position, m.id LIMIT 1"
        + _row_lock("m")
    )
    return next(iter(Item.objects.raw(sql, params)), None)


def open_item_exists(
    *, stage_id: int, annotator_id: int, overlap: int, skip: set[int], same_person: tuple[int, ...] = ()
) -> bool:
    """Whether any row `lock_first_open_item` could give exists, locked by others or not."""
    where, params = _open_for_annotator(
        stage_id=stage_id, annotator_id=annotator_id, overlap=overlap, skip=skip, same_person=same_person
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM annotation_mainitem m" + where + " LIMIT 1", params)  # noqa: S608
        return cursor.fetchone() is not None


# Items that are training items or worked examples of the stage or of a stage sharing a question with it,
# or were removed for a conflict at an earlier stage: never main work (`workflow.item_rules`).
_CLOSED_TO_MAIN = """
  AND NOT EXISTS (SELECT 1 FROM annotation_trainingitem t WHERE t.item_id = i.id AND t.stage_id IN ({sharing}))
  AND NOT EXISTS (SELECT 1 FROM annotation_workedexample w WHERE w.item_id = i.id AND w.stage_id IN ({sharing}))
  AND NOT EXISTS (SELECT 1 FROM annotation_crossstageconflict c JOIN annotation_stage ls ON ls.id = c.later_stage_id
                  WHERE c.item_id = i.id AND c.disposition = %s AND ls.project_id = %s AND ls."order" < %s)
"""
_SHARING_STAGES = (
    "SELECT %s UNION SELECT b.stage_id FROM annotation_stage_questions a"
    " JOIN annotation_stage_questions b ON b.labelquestion_id = a.labelquestion_id WHERE a.stage_id = %s"
)


def rule_item_missing(*, stage: Stage, settings: StageLabelling) -> bool:
    """Whether an item the stage's rule takes is not yet one of its main items — one statement, asked only
    when an annotator finds nothing left (items imported or settled upstream since the list was made).

    An explicit list changes only when the researcher saves it, which brings an open stage's list up to
    date itself; so for a list the question is only whether the stage was opened at all.
    """
    rule = settings.item_rule or item_rules.ALL
    if rule not in (item_rules.ALL, item_rules.SETTLED):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM annotation_mainitem m WHERE m.stage_id = %s LIMIT 1", [stage.pk])
            return cursor.fetchone() is None
    params: list = [stage.project_id, stage.pk]
    settled = ""
    if rule == item_rules.SETTLED:
        values = [str(v) for v in settings.source_values or []]
        if not values or settings.source_stage_id is None or settings.source_question_id is None:
            return False
        # Constant text and placeholders; every value is a parameter.
        settled = (
            " AND EXISTS (SELECT 1 FROM annotation_adjudication d WHERE d.item_id = i.id AND d.stage_id = %s"  # noqa: S608
            f" AND d.question_id = %s AND d.final_value IN ({', '.join(['%s'] * len(values))}))"
        )
        params += [settings.source_stage_id, settings.source_question_id, *values]
    sharing = _SHARING_STAGES
    params += [stage.pk, stage.pk, stage.pk, stage.pk]  # the two IN (sharing) lists
    params += [CrossStageConflict.Disposition.REMOVED, stage.project_id, stage.order]
    sql = (
        "SELECT 1 FROM annotation_item i WHERE i.project_id = %s"  # noqa: S608
        " AND NOT EXISTS (SELECT 1 FROM annotation_mainitem m WHERE m.stage_id = %s AND m.item_id = i.id)"
        + settled
        + _CLOSED_TO_MAIN.format(sharing=sharing)
        + " LIMIT 1"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone() is not None


def lock_assignment(*, stage_id: int, item_id: int, annotator_id: int) -> Assignment | None:
    """The annotator's main assignment of the item, locked (a concurrent reclaim or double submit waits)."""
    sql = (  # noqa: S608 — constant text; every value is a parameter
        "SELECT a.* FROM annotation_assignment a WHERE a.stage_id = %s AND a.item_id = %s"
        " AND a.annotator_id = %s AND a.phase = %s"
    ) + _wait_lock("a")
    return next(iter(Assignment.objects.raw(sql, [stage_id, item_id, annotator_id, Phase.MAIN])), None)


def lock_main_item(*, stage_id: int, item_id: int) -> MainItem | None:
    """The item's main-item row, locked: submits of one item's last labels run one after another."""
    sql = "SELECT m.* FROM annotation_mainitem m WHERE m.stage_id = %s AND m.item_id = %s" + _wait_lock("m")  # noqa: S608
    return next(iter(MainItem.objects.raw(sql, [stage_id, item_id])), None)


def submitted_count(*, stage_id: int, item_id: int) -> int:
    """How many main labels (assignments) of the item are submitted."""
    sql = (
        "SELECT COUNT(*) FROM annotation_assignment a WHERE a.stage_id = %s AND a.item_id = %s"
        " AND a.phase = %s AND a.submitted_at IS NOT NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [stage_id, item_id, Phase.MAIN])
        return cursor.fetchone()[0]


def _at(moment):
    return connection.ops.adapt_datetimefield_value(moment)


def take_slot(*, main_item_pk: int, overlap: int) -> bool:
    """Compare-and-swap one slot of a main-item row; False when it was full. ``has_free_slot`` is set from
    the row as it was before the statement (SQL's SET reads the old values)."""
    sql = (
        "UPDATE annotation_mainitem SET slots_taken = slots_taken + 1, has_free_slot = (slots_taken + 1 < %s)"
        " WHERE id = %s AND slots_taken < %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [overlap, main_item_pk, overlap])
        return cursor.rowcount == 1


def release_slot(*, stage_id: int, item_id: int) -> None:
    """Give a slot of the item back (a reservation that was not made, or one reclaimed)."""
    sql = (
        "UPDATE annotation_mainitem SET slots_taken = slots_taken - 1, has_free_slot = %s"
        " WHERE stage_id = %s AND item_id = %s AND slots_taken > 0"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [True, stage_id, item_id])


def insert_reservation(*, stage_id: int, item_id: int, annotator_id: int, now, until) -> int | None:
    """Insert the main assignment; its id, or None when the annotator already has the item (the unique
    constraint on stage, item and annotator: two of their own requests raced)."""
    sql = (
        "INSERT INTO annotation_assignment (stage_id, item_id, annotator_id, phase, created_at, reserved_until)"
        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [stage_id, item_id, annotator_id, Phase.MAIN, _at(now), _at(until)])
        row = cursor.fetchone()
    return row[0] if row else None


def insert_main_labels(*, assignment_id: int, labels: list[tuple[int, str, bool, str]], seconds: float, now) -> None:
    """Store first-round main labels: (question id, value, unsure, justification) each."""
    if not labels:
        return
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(labels))
    # Constant text and placeholders; every value is a parameter.
    sql = (
        "INSERT INTO annotation_label"  # noqa: S608
        " (assignment_id, question_id, phase, round, value, unsure, justification, seconds, created_at)"
        f" VALUES {values}"
    )
    params = []
    for question_id, value, unsure, justification in labels:
        params += [assignment_id, question_id, Phase.MAIN, Label.Round.PRE, value, unsure, justification, seconds]
        params.append(_at(now))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def mark_submitted(*, assignment_id: int, now) -> bool:
    """Set the assignment's submit time unless it has one; whether it was set."""
    sql = "UPDATE annotation_assignment SET submitted_at = %s WHERE id = %s AND submitted_at IS NULL"
    with connection.cursor() as cursor:
        cursor.execute(sql, [_at(now), assignment_id])
        return cursor.rowcount == 1


def stage_questions(stage: Stage) -> list[LabelQuestion]:
    """The stage's questions in their usual order, read once per stage object: they are kept as
    ``stage.questions.all()``'s result (what ``prefetch_related("questions")`` stores), so validation, the
    label form and the resolution reuse them."""
    prefetched = getattr(stage, "_prefetched_objects_cache", {})
    if "questions" in prefetched:
        return list(prefetched["questions"])
    sql = (
        "SELECT q.* FROM annotation_labelquestion q"
        " JOIN annotation_stage_questions sq ON sq.labelquestion_id = q.id"
        " WHERE sq.stage_id = %s ORDER BY q.project_id, q.position, q.id"
    )
    questions = list(LabelQuestion.objects.raw(sql, [stage.pk]))
    cached = stage.questions.all()
    cached._result_cache = questions
    cached._prefetch_done = True
    stage._prefetched_objects_cache = {**prefetched, "questions": cached}
    return questions
