"""Handing out main items: exactly N labels per item from N distinct annotators, under concurrency.

N is the stage's overlap; nobody gets an item twice, and this holds with dozens of annotators asking at once.

`next_assignment` gives an annotator their open reservation again (a reload shows the same item), or
reserves a new item for the stage's reservation time. The order of preference comes from the pure
strategies (`annotation.workflow.strategies`); the claim itself is made here:

- every (stage, item) has a `MainItem` row whose ``slots_taken`` counts live reservations and submitted
  labels; a slot is taken with a compare-and-swap ``UPDATE … WHERE slots_taken < N`` and a row-count check,
  which also keeps ``has_free_slot`` (its partial index finds the first open row without walking the full
  ones, so a request costs the same at the first item and at the twenty-thousandth);
- on PostgreSQL, candidate rows are locked with ``select_for_update(skip_locked=True)``, so concurrent
  annotators take *different* rows instead of queueing behind one another;
- on SQLite (the embedded default), ``select_for_update`` does nothing, but every transaction starts with
  ``BEGIN IMMEDIATE`` (settings), so the whole claim runs under the database's single write lock;
- the unique constraint on (stage, item, annotator) makes "never the same item twice" a database fact.

Which items are main work is the stage's item rule (`workflow.item_rules`); `main_items_sync` keeps the
rows equal to it. Items that join later — imported after labelling started, or settled by the stage this
one takes its items from — get rows like the first ones and are handed out under the same overlap,
strategy and reservations: an import brings every open stage up to date at once, and an annotator who
finds nothing open triggers a one-statement check for items the rule took since.

Crowd recruits flagged as one person (one browser or one client address behind several participant ids,
`selectors.crowd_duplicates`) are one annotator here: none of them is handed an item another of them had, so two
of them never fill two slots of one item; their hand-outs take their recruits' rows in turn (locked in id order).

A reservation that expired is reclaimed (its unsubmitted assignment deleted, the slot freed) only when
somebody asks for work; until then its owner may still submit it. Blind labelling is a matter of what
pages show: nothing here reads other annotators' labels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.db.models import Case, Exists, IntegerField, OuterRef, Value, When
from django.utils import timezone

from annotation.models import Assignment, CrowdRecruit, MainItem, Phase, Stage, StageLabelling
from annotation.selectors import stage_items
from annotation.selectors.crowd_duplicates import same_person_annotators
from annotation.selectors.labelling_settings import labelling_settings
from annotation.services import main_sql
from annotation.workflow.strategies import BALANCED, IN_ORDER, CandidateItem, order_items

DEFAULT_RESERVATION_MINUTES = 30
# Preferred rows offered to one locking statement (random and balanced strategies).
PREFERENCE_WINDOW = 64
MAX_ATTEMPTS = 30
BUSY_PAUSE = 0.002  # seconds, doubled per attempt up to MAX_BUSY_PAUSE
MAX_BUSY_PAUSE = 0.05
# Expired reservations reclaimed per request (they are few: an annotator holds one reservation at a time).
RECLAIM_BATCH = 50
# Item ids per statement when main items are withdrawn (SQLite's parameter limit).
SYNC_CHUNK = 500


class AssignmentBusy(RuntimeError):
    """Open items exist but stayed locked by other annotators' claims for the whole retry budget."""


@dataclass(frozen=True)
class MainItemsSync:
    """What bringing a stage's main items up to its rule did."""

    added: int  # items that joined
    withdrawn: int  # items that left before anyone was handed them
    kept: int  # items that left the rule but were already handed out: they stay, their labels stand
    total: int  # main items afterwards


def main_items_sync(stage: Stage) -> MainItemsSync:
    """Make the stage's main items what its item rule says (`workflow.item_rules`).

    Items that joined are appended after the current ones (the in-order strategy reaches them after those;
    the random and balanced strategies rank them among the open items like any other). Items that left
    the rule are withdrawn only while nobody was ever handed them; once handed out they stay, so no label
    is orphaned. Safe under concurrency: inserts ignore the (stage, item) unique constraint, and the
    withdrawal deletes only rows with no slot taken (on PostgreSQL a claim holds the row it takes, and the
    delete re-checks ``slots_taken`` after waiting for it; on SQLite the write lock serialises both).
    """
    settings = StageLabelling.objects.filter(stage=stage).first() or StageLabelling(stage=stage)
    wanted = stage_items.main_items_wanted(stage, settings)
    rows = dict(MainItem.objects.filter(stage=stage).values_list("item_id", "position"))
    missing = [item_id for item_id in wanted if item_id not in rows]
    start = max(rows.values(), default=-1) + 1
    MainItem.objects.bulk_create(
        [MainItem(stage=stage, item_id=item_id, position=start + n) for n, item_id in enumerate(missing)],
        ignore_conflicts=True,
    )
    leaving = sorted(set(rows) - set(wanted))
    withdrawn = 0
    for chunk in range(0, len(leaving), SYNC_CHUNK):
        handed_out = Assignment.objects.filter(stage=stage, item_id=OuterRef("item_id"))
        withdrawn += (
            MainItem.objects.filter(stage=stage, item_id__in=leaving[chunk : chunk + SYNC_CHUNK], slots_taken=0)
            .exclude(Exists(handed_out))
            .delete()[0]
        )
    return MainItemsSync(
        added=len(missing),
        withdrawn=withdrawn,
        kept=len(leaving) - withdrawn,
        total=len(rows) + len(missing) - withdrawn,
    )


def project_main_items_sync(project_id: int) -> dict[int, MainItemsSync]:
    """Bring every stage of the project whose main labelling is open (it has main items) up to its rule:
    after an import, a training set drawn, a conflict disposed of. A stage not open yet is filled when an
    annotator first asks it for work."""
    opened = Stage.objects.filter(project_id=project_id, main_items__isnull=False).distinct().order_by("order")
    return {stage.pk: main_items_sync(stage) for stage in opened}


def _reservation_time(stage: Stage) -> timedelta:
    return timedelta(minutes=labelling_settings(stage).reservation_minutes or DEFAULT_RESERVATION_MINUTES)


def current_reservation(*, stage: Stage, annotator) -> Assignment | None:
    """The annotator's main assignment in the stage that is handed out but not submitted, if any."""
    return main_sql.open_reservation(stage_id=stage.pk, annotator_id=annotator.pk)


def reclaim_expired(*, stage: Stage, now) -> int:
    """Free the slots of reservations that expired unsubmitted. Call inside a transaction.

    The rows are locked first (skipping any a submit is holding), so a reservation is never deleted under
    a submit that is storing its labels; the submit then finds it gone and says the reservation expired.
    """
    expired = main_sql.lock_expired_reservations(stage_id=stage.pk, now=now, limit=RECLAIM_BATCH)
    if not expired:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, _ in expired]).delete()
    for _, item_id in expired:  # in item order, so two reclaimers never wait on each other in a cycle
        main_sql.release_slot(stage_id=stage.pk, item_id=item_id)
    return len(expired)


def release_reservations(*, stage: Stage, annotator) -> int:
    """Give back every main item the annotator holds unsubmitted in the stage (a crowd recruit who returned the
    study or was idle past the link's time): the assignments are deleted and their slots freed. Call inside a
    transaction; rows a submit is holding are waited for, so a label being stored is never lost under it."""
    held = list(
        Assignment.objects.select_for_update()
        .filter(stage=stage, annotator=annotator, phase=Phase.MAIN, submitted_at__isnull=True)
        .order_by("item_id")
        .values_list("pk", "item_id")
    )
    Assignment.objects.filter(pk__in=[pk for pk, _ in held]).delete()
    for _, item_id in held:
        main_sql.release_slot(stage_id=stage.pk, item_id=item_id)
    return len(held)


def next_assignment(*, stage: Stage, annotator, now=None) -> Assignment | None:
    """The annotator's current main item in the stage, reserving a new one when they hold none.

    Returns None when nothing is left for this annotator (every item is full or was theirs already).
    The caller checks that the annotator passed the gate (`services.labelling`).
    """
    now = now or timezone.now()
    until = now + _reservation_time(stage)
    with transaction.atomic():
        held = current_reservation(stage=stage, annotator=annotator)
        # Extend the reservation unless it was reclaimed meanwhile (the update then touches no row).
        if held is not None and Assignment.objects.filter(pk=held.pk, submitted_at__isnull=True).update(
            reserved_until=until
        ):
            held.reserved_until = until
            return held
        reclaim_expired(stage=stage, now=now)
        same_person = tuple(same_person_annotators(stage_id=stage.pk, annotator_id=annotator.pk))
        if same_person:  # one person's ids take their items in turn (on PostgreSQL; SQLite's write lock already does)
            group = CrowdRecruit.objects.filter(user_id__in=[annotator.pk, *same_person]).order_by("pk")
            list(group.select_for_update().values_list("pk", flat=True))
        assignment = _claim(stage=stage, annotator=annotator, until=until, same_person=same_person)
        if assignment is not None:
            return assignment
        # Nothing open: items may have joined the rule since the list was made (imported, or settled by the
        # stage this one takes its items from). One statement says whether; only then is the list rebuilt.
        # Either way the rows are looked at once more: another annotator's request may have made them between
        # the first look and that statement (the first requests of a stage all find its list empty).
        if main_sql.rule_item_missing(stage=stage, settings=labelling_settings(stage)):
            main_items_sync(stage)
        return _claim(stage=stage, annotator=annotator, until=until, same_person=same_person)


def _preferred(
    stage: Stage, annotator, settings: StageLabelling, lost: set[int], same_person: tuple[int, ...]
) -> list[tuple[int, int]]:
    """(main-item row id, item id) of open rows, in the order the random or balanced strategy prefers."""
    rows = MainItem.objects.filter(stage=stage).exclude(pk__in=lost)
    if settings.strategy != BALANCED:  # balanced measures coverage over every item, full ones included
        rows = rows.filter(has_free_slot=True)
    rows = list(
        rows.order_by("position", "id").values_list("pk", "item_id", "item__subject", "item__category", "slots_taken")
    )
    annotators = [annotator.pk, *same_person]
    already = set(Assignment.objects.filter(stage=stage, annotator_id__in=annotators).values_list("item_id", flat=True))
    pk_of = {item_id: pk for pk, item_id, *_ in rows}
    ordered = order_items(
        settings.strategy,
        [
            CandidateItem(item_id=item_id, subject=subject, category=category)
            for _, item_id, subject, category, _ in rows
        ],
        already_labelled=already,
        label_counts={item_id: taken for _, item_id, _, _, taken in rows},
        overlap=stage.overlap,
        seed=settings.seed,
        annotator=annotator.pk,
    )
    return [(pk_of[item_id], item_id) for item_id in ordered]


def _lock_one(
    stage: Stage, annotator, settings: StageLabelling, lost: set[int], same_person: tuple[int, ...]
) -> MainItem | None | bool:
    """Lock the most preferred open row nobody else holds (its item loaded by the same statement); None
    when no open row exists for this annotator; False when open rows exist but all are held by others
    right now.

    One row is locked per request — locking a batch would hold rows other annotators need. Only the
    `MainItem` row is locked (``of=("self",)``), never the item it points to.
    """
    if settings.strategy == IN_ORDER:
        # The database orders, filters and locks in one statement.
        rows = {
            "stage_id": stage.pk,
            "annotator_id": annotator.pk,
            "overlap": stage.overlap,
            "skip": lost,
            "same_person": same_person,
        }
        item = main_sql.lock_first_open_item(**rows)
        if item is not None:
            return MainItem(pk=item.main_item_pk, stage=stage, item=item)
        return False if main_sql.open_item_exists(**rows) else None
    preferred = _preferred(stage, annotator, settings, lost, same_person)
    if not preferred:
        return None
    for start in range(0, len(preferred), PREFERENCE_WINDOW):
        window = preferred[start : start + PREFERENCE_WINDOW]
        rank = Case(*[When(pk=pk, then=Value(i)) for i, (pk, _) in enumerate(window)], output_field=IntegerField())
        rows = MainItem.objects.filter(
            pk__in=[pk for pk, _ in window], has_free_slot=True, slots_taken__lt=stage.overlap
        )
        # Only the MainItem row is locked (of "self"), never the item it points to.
        found = rows.select_for_update(skip_locked=True, of=("self",)).select_related("item").order_by(rank).first()
        if found is not None:
            return found
    return False


def _claim(*, stage: Stage, annotator, until, same_person: tuple[int, ...] = ()) -> Assignment | None:
    """Take a slot on the most preferred open item whose row nobody else holds right now.

    Rows another transaction holds are skipped, not waited for; if every open row is held, they are read
    again after a short pause (their holders commit within milliseconds). None means no open item is left
    for this annotator, never merely that the open ones were busy.
    """
    settings = labelling_settings(stage)
    lost: set[int] = set()  # rows this annotator raced themselves for (see _take_slot)
    for attempt in range(MAX_ATTEMPTS):
        row = _lock_one(stage, annotator, settings, lost, same_person)
        if row is None:
            return None
        if row is False:
            time.sleep(min(BUSY_PAUSE * 2**attempt, MAX_BUSY_PAUSE))
            continue
        assignment = _take_slot(stage=stage, main_item=row, annotator=annotator, until=until)
        if assignment is not None:
            return assignment
        lost.add(row.pk)
    raise AssignmentBusy("Every open item is being handed out to someone else right now; try again.")


def _take_slot(*, stage: Stage, main_item: MainItem, annotator, until) -> Assignment | None:
    """Take a slot on the locked row and record the reservation; None when the row is full after all or
    the annotator already has the item (two of their own requests raced: the slot is given back)."""
    if not main_sql.take_slot(main_item_pk=main_item.pk, overlap=stage.overlap):
        return None
    now = timezone.now()
    item = main_item.item
    assignment_id = main_sql.insert_reservation(
        stage_id=stage.pk, item_id=item.pk, annotator_id=annotator.pk, now=now, until=until
    )
    if assignment_id is None:
        main_sql.release_slot(stage_id=stage.pk, item_id=item.pk)
        return None
    return Assignment(
        pk=assignment_id,
        stage=stage,
        item=item,
        annotator=annotator,
        phase=Phase.MAIN,
        created_at=now,
        reserved_until=until,
    )
