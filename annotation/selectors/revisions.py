"""Reads for revising labels: an annotator's recent items in a stage and a label's stored versions.

The recent items are the submitted ones, with the annotator's latest answers (a held revision included) and whether
each can still be revised (`workflow.revision_rules`): what they show never depends on the other annotators."""

from __future__ import annotations

from django.db.models import Count
from django.utils import timezone

from annotation.models import Assignment, HeldRevision, Label, MainItem, Phase, Stage
from annotation.selectors.labelling_settings import labelling_settings
from annotation.workflow.revision_rules import RevisionState, RevisionWindow, revision_refusal, window_statement


def revision_window(stage: Stage) -> RevisionWindow:
    settings = labelling_settings(stage)
    return RevisionWindow(minutes=settings.revision_minutes, items=settings.revision_items)


def _submitted(stage: Stage, annotator_id: int):
    return Assignment.objects.filter(
        stage=stage, annotator_id=annotator_id, phase=Phase.MAIN, submitted_at__isnull=False
    ).order_by("-submitted_at", "-id")


def revision_state(*, stage: Stage, assignment: Assignment) -> RevisionState:
    """The rule's inputs for one submitted assignment: when, and how many items the annotator submitted since."""
    later = _submitted(stage, assignment.annotator_id).filter(submitted_at__gt=assignment.submitted_at).count()
    return RevisionState(submitted_at=assignment.submitted_at, recent_rank=later)


def resolution_started(*, stage: Stage, item_id: int, main_item: MainItem | None) -> bool:
    """Whether the item's resolution has started (it has its N labels), so that a revision is held, not
    counted (``main_item``: its row, possibly locked, or None for an item outside main labelling's
    bookkeeping, which has started once it has its N labels). Never shown to the annotator."""
    if main_item is not None:
        return main_item.status != MainItem.Status.LABELLING
    return _submitted_labels(stage, item_id) >= stage.overlap


def _submitted_labels(stage: Stage, item_id: int) -> int:
    return Assignment.objects.filter(stage=stage, item_id=item_id, phase=Phase.MAIN, submitted_at__isnull=False).count()


def latest_answers(labels) -> dict[int, tuple[str, bool, str]]:
    """Per label id, the annotator's latest answer (value, unsure, justification): their newest held
    revision if any, else the label."""
    latest = {label.pk: (label.value, label.unsure, label.justification) for label in labels}
    for held in HeldRevision.objects.filter(label_id__in=list(latest)).order_by("given_at", "id"):
        latest[held.label_id] = (held.value, held.unsure, held.justification)
    return latest


def recent_items(*, annotator, stage: Stage) -> list[dict]:
    """The annotator's last submitted items in the stage (as many as the revision window counts, newest
    first): the item, the annotator's latest answers, how many times each was revised, whether (and why not)
    it can be revised now and the window in time and position. Nothing here depends on the other annotators:
    not how the item was resolved, nor whether they have submitted. Four queries, whatever the size of the
    window and of the stage."""
    window = revision_window(stage)
    assignments = list(_submitted(stage, annotator.pk).select_related("item")[: max(window.items, 1)])
    if not assignments:
        return []
    labels: dict[int, list[Label]] = {}
    for label in (
        Label.objects.filter(assignment__in=assignments, round=Label.Round.PRE)
        .select_related("question")
        .annotate(n_revisions=Count("revisions", distinct=True), n_held=Count("held_revisions", distinct=True))
        .order_by("question__position", "question_id")
    ):
        labels.setdefault(label.assignment_id, []).append(label)
    latest = latest_answers([label for rows in labels.values() for label in rows])
    now = timezone.now()
    rows = []
    for rank, assignment in enumerate(assignments):
        state = RevisionState(submitted_at=assignment.submitted_at, recent_rank=rank)
        refusal = revision_refusal(state, window, now=now)
        rows.append(
            {
                "assignment": assignment,
                "item": assignment.item,
                "submitted_at": assignment.submitted_at,
                "revisable": refusal is None,
                "refusal": refusal or "",
                "window": window_statement(state, window, now=now),
                "answers": [
                    {
                        "question": label.question.key,
                        "value": latest[label.pk][0],
                        "unsure": latest[label.pk][1],
                        "justification": latest[label.pk][2],
                        "revisions": label.n_revisions + label.n_held,
                    }
                    for label in labels.get(assignment.pk, [])
                ],
            }
        )
    return rows


def label_history(label: Label) -> list[dict]:
    """Every counted version of a label, oldest first, the current one last (held revisions, given after
    the item's resolution started, are in ``label.held_revisions``)."""
    earlier = list(label.revisions.order_by("version"))
    current_since = earlier[-1].replaced_at if earlier else label.created_at
    history = [
        {"version": r.version, "value": r.value, "unsure": r.unsure, "justification": r.justification, "at": r.given_at}
        for r in earlier
    ]
    history.append(
        {
            "version": len(earlier) + 1,
            "value": label.value,
            "unsure": label.unsure,
            "justification": label.justification,
            "at": current_since,
        }
    )
    return history


def main_assignment_of(*, stage: Stage, item, annotator) -> Assignment | None:
    """The annotator's main assignment of the item (reserved or submitted), with the item; None when it has none."""
    return (
        Assignment.objects.select_related("item")
        .filter(stage=stage, item=item, annotator=annotator, phase=Phase.MAIN)
        .order_by("pk")
        .first()
    )


def assignment_to_revise(*, annotator, stage: Stage, item_id: int) -> Assignment | None:
    """The annotator's submitted main assignment of the item, if any (the revision page's subject)."""
    return _submitted(stage, annotator.pk).filter(item_id=item_id).select_related("item").first()
