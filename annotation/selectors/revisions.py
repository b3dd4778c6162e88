"""Reads for revising labels: an annotator's recent items in a stage and a label's stored versions.

The recent items are the submitted ones, with their current answers and whether each can still be revised
(`workflow.revision_rules`)."""

from __future__ import annotations

from django.db.models import Count
from django.utils import timezone

from annotation.models import Assignment, Label, MainItem, Phase, Stage
from annotation.selectors.labelling_settings import labelling_settings
from annotation.workflow.revision_rules import RevisionState, RevisionWindow, revision_refusal


def revision_window(stage: Stage) -> RevisionWindow:
    settings = labelling_settings(stage)
    return RevisionWindow(minutes=settings.revision_minutes, items=settings.revision_items)


def _submitted(stage: Stage, annotator_id: int):
    return Assignment.objects.filter(
        stage=stage, annotator_id=annotator_id, phase=Phase.MAIN, submitted_at__isnull=False
    ).order_by("-submitted_at", "-id")


def revision_state(*, stage: Stage, assignment: Assignment, main_item: MainItem | None) -> RevisionState:
    """The rule's inputs for one submitted assignment (``main_item``: its row, possibly locked, or None for
    an item outside main labelling's bookkeeping, which counts as complete once it has its N labels)."""
    later = _submitted(stage, assignment.annotator_id).filter(submitted_at__gt=assignment.submitted_at).count()
    if main_item is not None:
        complete = main_item.status != MainItem.Status.LABELLING
    else:
        complete = _submitted_labels(stage, assignment.item_id) >= stage.overlap
    return RevisionState(complete=complete, submitted_at=assignment.submitted_at, recent_rank=later)


def _submitted_labels(stage: Stage, item_id: int) -> int:
    return Assignment.objects.filter(stage=stage, item_id=item_id, phase=Phase.MAIN, submitted_at__isnull=False).count()


def recent_items(*, annotator, stage: Stage) -> list[dict]:
    """The annotator's last submitted items in the stage (as many as the revision window counts, newest
    first): the item, the current answers, how many times each was revised, and whether (and why not) it
    can be revised now. Nothing here tells how the item was resolved: that would say whether the others
    agreed. Four queries, whatever the size of the window and of the stage."""
    window = revision_window(stage)
    assignments = list(_submitted(stage, annotator.pk).select_related("item")[: max(window.items, 1)])
    if not assignments:
        return []
    item_ids = [a.item_id for a in assignments]
    statuses = dict(MainItem.objects.filter(stage=stage, item_id__in=item_ids).values_list("item_id", "status"))
    labels: dict[int, list[Label]] = {}
    for label in (
        Label.objects.filter(assignment__in=assignments, round=Label.Round.PRE)
        .select_related("question")
        .annotate(n_revisions=Count("revisions"))
        .order_by("question__position", "question_id")
    ):
        labels.setdefault(label.assignment_id, []).append(label)
    now = timezone.now()
    rows = []
    for rank, assignment in enumerate(assignments):
        status = statuses.get(assignment.item_id)
        state = RevisionState(
            complete=status != MainItem.Status.LABELLING
            if status is not None
            else _submitted_labels(stage, assignment.item_id) >= stage.overlap,
            submitted_at=assignment.submitted_at,
            recent_rank=rank,
        )
        refusal = revision_refusal(state, window, now=now)
        rows.append(
            {
                "assignment": assignment,
                "item": assignment.item,
                "submitted_at": assignment.submitted_at,
                "revisable": refusal is None,
                "refusal": refusal or "",
                "answers": [
                    {
                        "question": label.question.key,
                        "value": label.value,
                        "unsure": label.unsure,
                        "justification": label.justification,
                        "revisions": label.n_revisions,
                    }
                    for label in labels.get(assignment.pk, [])
                ],
            }
        )
    return rows


def label_history(label: Label) -> list[dict]:
    """Every version of a label, oldest first, the current one last."""
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


def assignment_to_revise(*, annotator, stage: Stage, item_id: int) -> Assignment | None:
    """The annotator's submitted main assignment of the item, if any (the revision page's subject)."""
    return _submitted(stage, annotator.pk).filter(item_id=item_id).select_related("item").first()
