"""Reads for adjudication: the queue of items waiting for a discussion or a reviewer, and one item's
labels and justifications side by side (shown to adjudicators, and to an item's own annotators only
after they submitted — labelling stays blind)."""

from __future__ import annotations

from annotation.models import Adjudication, Comment, Item, Label, MainItem, Phase, Stage, Thread

QUEUE_STATUSES = (MainItem.Status.DISCUSSION, MainItem.Status.SENIOR_REVIEW, MainItem.Status.REVIEWER_QUEUE)


def adjudication_queue(*, stage: Stage | None = None, project=None):
    """Items waiting for a discussion to end or for a reviewer, oldest first."""
    rows = MainItem.objects.filter(status__in=QUEUE_STATUSES).select_related("item", "stage", "stage__project")
    if stage is not None:
        rows = rows.filter(stage=stage)
    if project is not None:
        rows = rows.filter(stage__project=project)
    return rows.order_by("stage__project_id", "stage__order", "position", "id")


def item_side_by_side(*, stage: Stage, item: Item) -> dict:
    """Per question: every annotator's first answer and post-discussion answer with justifications, and
    the decision if there is one. Annotators appear as "Annotator 1…N" in the order they submitted."""
    questions = list(stage.questions.all())
    labels = (
        Label.objects.filter(
            assignment__stage=stage, assignment__item=item, phase=Phase.MAIN, assignment__submitted_at__isnull=False
        )
        .select_related("assignment__annotator", "question")
        .order_by("assignment__submitted_at", "assignment_id")
    )
    annotators: dict[int, dict] = {}
    cells: dict[tuple[int, int, str], Label] = {}
    for label in labels:
        annotator = label.assignment.annotator
        annotators.setdefault(
            annotator.pk,
            {"id": annotator.pk, "name": f"Annotator {len(annotators) + 1}", "username": annotator.username},
        )
        cells[(annotator.pk, label.question_id, label.round)] = label
    decisions = {
        a.question_id: a for a in Adjudication.objects.filter(stage=stage, item=item).select_related("decided_by")
    }
    rows = []
    for question in questions:
        answers = []
        for annotator_id, who in annotators.items():
            pre = cells.get((annotator_id, question.id, Label.Round.PRE))
            post = cells.get((annotator_id, question.id, Label.Round.POST))
            answers.append(
                {
                    "annotator": who,
                    "pre": _shown(question, pre),
                    "post": _shown(question, post),
                }
            )
        decision = decisions.get(question.id)
        rows.append(
            {
                "question": question,
                "answers": answers,
                "decision": decision,
                "decision_label": question.choice_label(decision.final_value) if decision else "",
            }
        )
    thread = Thread.objects.filter(stage=stage, item=item, kind=Thread.Kind.ADJUDICATION).first()
    comments = list(Comment.objects.filter(thread=thread).select_related("author")) if thread else []
    return {"questions": rows, "annotators": list(annotators.values()), "thread": thread, "comments": comments}


def _shown(question, label: Label | None) -> dict | None:
    if label is None:
        return None
    return {
        "value": "unsure" if label.unsure else label.value,
        "label": "Unsure" if label.unsure else question.choice_label(label.value),
        "justification": label.justification,
        "seconds": label.seconds,
    }
