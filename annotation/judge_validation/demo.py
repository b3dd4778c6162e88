"""Demo content (`manage.py seed_demo`, idempotent): a judge-validation project on the demo simulation audit,
with labels from three demo annotators so the report page is populated.

The demo annotators' answers are scripted, not human: each follows the simulated judge's score and, with a
seeded 12 % chance per question, moves one step on the scale — a made-up level of disagreement so the
statistics have something to measure. Disagreements are discussed (most settle there) and the rest go to
the demo adjudicator. The gate is set directly for these accounts (their training is not simulated), which
the enrolment's gate detail says. Twelve turns are left for the demo ``annotator`` to label.
"""

from __future__ import annotations

import random

from django.contrib.auth.models import User

from annotation.judge_validation.audit_source import audit_judge_scores, demo_audit
from annotation.judge_validation.services import validation_project_create, validation_record
from annotation.models import AnnotationProject, Enrollment, MainItem, Thread
from annotation.selectors.judge_validation import sampled_items
from annotation.services import resolution
from annotation.services.enrollment import enrollment_create
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.training import guideline_confirm
from annotation.workflow.answers import Answer
from edufair_web.accounts.roles import ANNOTATOR
from edufair_web.accounts.services import user_create_with_role

DEMO_VALIDATION_NAME = "Judge validation of the demo audit (simulation)"
DEMO_SAMPLE = 60
LEFT_FOR_THE_VISITOR = 12
DISAGREEMENT = 0.12
DEMO_LABELLERS = ("annotator2", "annotator3", "annotator4")
DEMO_PASSWORD = "demo-annotator"


def _nudge(value: str, rng: random.Random) -> str:
    if value == "n/a" or rng.random() >= DISAGREEMENT:
        return value
    step = int(value) + rng.choice((-1, 1))
    return str(min(2, max(0, step)))


def _pass_gate(stage, user) -> Enrollment:
    enrollment = enrollment_create(stage=stage, user=user)
    guideline_confirm(enrollment=enrollment)
    Enrollment.objects.filter(pk=enrollment.pk).update(
        status=Enrollment.Status.PASSED,
        gate_passed=True,
        gate_rule="demo",
        gate_detail={"note": "Demo account: the gate was set directly, training was not simulated."},
    )
    return enrollment


def judge_validation_demo_seed(stdout) -> None:
    if AnnotationProject.objects.filter(name=DEMO_VALIDATION_NAME).exists():
        stdout.write(f"Judge validation demo: “{DEMO_VALIDATION_NAME}” already exists; left as it is.")
        return
    audit = demo_audit()
    if audit is None:
        stdout.write("Judge validation demo: no finished demo audit; skipped.")
        return
    researcher = User.objects.filter(username="researcher").first()
    project = validation_project_create(audit=audit, size=DEMO_SAMPLE, seed=0, name=DEMO_VALIDATION_NAME, by=researcher)
    stage = project.stages.get()
    labellers = [
        user_create_with_role(username=name, role=ANNOTATOR, password=DEMO_PASSWORD) for name in DEMO_LABELLERS
    ]
    for user in labellers:
        _pass_gate(stage, user)
    visitor = User.objects.filter(username="annotator").first()
    if visitor is not None:
        _pass_gate(stage, visitor)

    items = list(sampled_items(project))
    judge = {}
    for score in audit_judge_scores(
        turn_ids=[i.source_turn_id for i in items], rubric_template_id=audit.judge_template_id
    ).values("turn_id", "metric", "value"):
        judge[(score["turn_id"], score["metric"])] = "n/a" if score["value"] == -1 else str(score["value"])
    questions = list(stage.questions.values_list("key", flat=True))
    # The first items in order are labelled by all three; the last ones stay open for the visitor.
    labelled = {item.pk for item in items[: len(items) - LEFT_FOR_THE_VISITOR]}
    MainItem.objects.filter(stage=stage).exclude(item_id__in=labelled).update(position=10_000)
    for index, user in enumerate(labellers):
        rng = random.Random(f"demo-labels:{index}")
        for _ in labelled:
            assignment = label_next(annotator=user, stage=stage)
            if assignment is None or assignment.item_id not in labelled:
                break
            turn_id = assignment.item.source_turn_id
            answers = {key: Answer(value=_nudge(judge[(turn_id, key)], rng)) for key in questions}
            main_label_submit(
                annotator=user, stage=stage, item=assignment.item, answers=answers, seconds=40 + 5 * index
            )

    # Discussions: most settle on the first annotator's answer; every fourth goes to the adjudicator.
    adjudicator = User.objects.filter(username="adjudicator").first()
    for n, thread in enumerate(Thread.objects.filter(stage=stage, kind=Thread.Kind.ADJUDICATION).order_by("id")):
        item = thread.item
        disputed = resolution.disputed_questions(stage, item)
        pre, _ = resolution.item_labels(stage, item)
        if n % 4 == 3 and adjudicator is not None:
            decisions = {key: pre[key][labellers[1].pk] for key in disputed}
            resolution.reviewer_decide(
                stage=stage,
                item=item,
                decisions=decisions,
                note="Demo: the second reading fits the rubric.",
                by=adjudicator,
            )
            continue
        for user in labellers:
            answers = {key: Answer(value=pre[key][labellers[0].pk]) for key in disputed}
            resolution.post_discussion_label_submit(stage=stage, item=item, annotator=user, answers=answers)

    validation = project.judge_validations.get()
    validation_record(validation=validation, by=researcher)
    validation.refresh_from_db()
    verdicts = ", ".join(f"{m} {row['verdict']}" for m, row in validation.result["metrics"].items())
    stdout.write(
        f"Judge validation demo: “{project.name}” — {len(labelled)} of {len(items)} sampled turns labelled by "
        f"{', '.join(DEMO_LABELLERS)} (scripted), verdicts recorded ({verdicts}); {LEFT_FOR_THE_VISITOR} turns "
        "left for the demo annotator."
    )
