"""Demo content (`manage.py seed_demo`, idempotent): a judge-validation project on each demo simulation audit.

The first project, on the demo audit of a fair and a planted-bias tutor, has labels from three demo annotators
so the report page is populated.

The demo annotators' answers are scripted, not human: each follows the simulated judge's score and, with a
seeded 12 % chance per question, moves one step on the scale — a made-up level of disagreement so the
statistics have something to measure. Disagreements are discussed (most settle there) and the rest go to
the demo adjudicator. The gate is set directly for these accounts (their training is not simulated), which
the enrolment's gate detail says. Twelve turns are left for the demo ``annotator`` to label.

A second project is built on the demo audit whose simulated judge is cue-sensitive (a fair tutor; the judge is
one point harsher on the tone of turns to non-English-L1 students): ``CUE_PER_STRATUM`` turns per tutor × domain
× condition, all of them labelled by the same three scripted annotators. Their answers follow the *unbiased*
score — the rule-based simulated judge's, which is the cue-sensitive judge without its bias, i.e. the truth of
the simulation — with the same made-up disagreement, settled the same way. On the audit's judge-corrected page
the judge's flag of the tone gap is then not supported by the humans.
"""

from __future__ import annotations

import random

from django.contrib.auth.models import User

from annotation.judge_validation.audit_source import (
    audit_judge_scores,
    demo_audit,
    endpoints_by_name,
    finished_audits,
    judge_template,
    judgements_run,
    turns_to_judge,
)
from annotation.judge_validation.services import validation_project_create, validation_record
from annotation.models import AnnotationProject, Enrollment, MainItem, Thread
from annotation.selectors.judge_validation import sampled_items
from annotation.services import resolution
from annotation.services.enrollment import enrollment_create
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.training import enrollment_gate_record, guideline_confirm
from annotation.workflow.answers import Answer
from edufair_web.accounts.roles import ANNOTATOR
from edufair_web.accounts.services import demo_user_ensure

DEMO_VALIDATION_NAME = "Judge validation of the demo audit (simulation)"
DEMO_SAMPLE = 60
LEFT_FOR_THE_VISITOR = 12
DISAGREEMENT = 0.12
DEMO_LABELLERS = ("annotator2", "annotator3", "annotator4")
DEMO_PASSWORD = "demo-annotator"

# The audits demo's second audit (audits.demo.CUE_DEMO_AUDIT_NAME; a test checks the two agree).
CUE_DEMO_AUDIT_NAME = "Demo audit (simulation): fair tutor, cue-sensitive judge"
CUE_VALIDATION_NAME = "Judge validation of the cue-sensitive judge demo audit (simulation)"
# Turns per tutor × domain × condition. With about 10 a side's labels often all agree, PPI++ then trusts them
# with a standard error near 0, and chance "gaps the judge hides" crowd the page; with 20 the corrected interval
# of the flagged tone gap is about ±0.35 points.
CUE_PER_STRATUM = 20


def _nudge(value: str, rng: random.Random) -> str:
    if value == "n/a" or rng.random() >= DISAGREEMENT:
        return value
    step = int(value) + rng.choice((-1, 1))
    return str(min(2, max(0, step)))


def _pass_gate(stage, user) -> Enrollment:
    enrollment = enrollment_create(stage=stage, user=user)
    guideline_confirm(enrollment=enrollment)
    return enrollment_gate_record(
        enrollment=enrollment,
        rule="demo",
        detail={"note": "Demo account: the gate was set directly, training was not simulated."},
    )


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
    labellers = [demo_user_ensure(username=name, role=ANNOTATOR, password=DEMO_PASSWORD) for name in DEMO_LABELLERS]
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
    # The first items in order are labelled by all three; the last ones stay open for the visitor.
    labelled = {item.pk for item in items[: len(items) - LEFT_FOR_THE_VISITOR]}
    MainItem.objects.filter(stage=stage).exclude(item_id__in=labelled).update(position=10_000)
    _label_scripted(stage, labellers, labelled, judge, "demo-labels")
    _settle(stage, labellers)

    validation = project.judge_validations.get()
    validation_record(validation=validation, by=researcher)
    validation.refresh_from_db()
    verdicts = ", ".join(f"{m} {row['verdict']}" for m, row in validation.result["metrics"].items())
    stdout.write(
        f"Judge validation demo: “{project.name}” — {len(labelled)} of {len(items)} sampled turns labelled by "
        f"{', '.join(DEMO_LABELLERS)} (scripted), verdicts recorded ({verdicts}); {LEFT_FOR_THE_VISITOR} turns "
        "left for the demo annotator."
    )


def _label_scripted(stage, labellers: list[User], labelled: set[int], truth: dict, seed: str) -> None:
    """Each labeller answers every item in ``labelled`` in the stage's order: ``truth[(turn_id, question)]``,
    moved one step with the demo's chance of disagreement."""
    questions = list(stage.questions.values_list("key", flat=True))
    for index, user in enumerate(labellers):
        rng = random.Random(f"{seed}:{index}")
        for _ in labelled:
            assignment = label_next(annotator=user, stage=stage)
            if assignment is None or assignment.item_id not in labelled:
                break
            turn_id = assignment.item.source_turn_id
            answers = {key: Answer(value=_nudge(truth[(turn_id, key)], rng)) for key in questions}
            main_label_submit(
                annotator=user, stage=stage, item=assignment.item, answers=answers, seconds=40 + 5 * index
            )


def _settle(stage, labellers: list[User]) -> None:
    """Discussions: most settle on the first annotator's answer; every fourth goes to the adjudicator."""
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


def _labellers() -> list[User]:
    """The three scripted demo annotators (made by the first project's seed; made here when missing)."""
    found = {user.username: user for user in User.objects.filter(username__in=DEMO_LABELLERS)}
    return [
        found.get(name) or demo_user_ensure(username=name, role=ANNOTATOR, password=DEMO_PASSWORD)
        for name in DEMO_LABELLERS
    ]


def _unbiased_judge(audit):
    """The audit's simulated judge without its ``judge_bias``: the endpoint with the same simulation settings
    otherwise (the demo's rule-based judge), or None."""
    judge = audit.judge_endpoint
    config = {key: value for key, value in (judge.simulation_config or {}).items() if key != "judge_bias"}
    return next(
        (e for e in endpoints_by_name() if e.provider == judge.provider and e.simulation_config == config), None
    )


def _unbiased_scores(audit, turn_ids: list[int], truth_judge) -> dict[tuple[int, str], str]:
    """The unbiased judge's score of each turn and metric, as an answer ("n/a" for not applicable)."""
    turns = turns_to_judge(turn_ids=turn_ids)
    rubric = judge_template(audit.judge_template_id)
    result = judgements_run(
        turns=turns, judge_endpoint=truth_judge, template_text=rubric.text, allowed=rubric.judge_allowed_values
    )
    scores = {}
    for turn_id, judgement in result.judgements.items():
        for metric, value in judgement.scores.items():
            scores[(turn_id, metric)] = "n/a" if value == -1 else str(value)
    return scores


def cue_validation_demo_seed(stdout) -> None:
    """The judge-validation project of the cue-sensitive judge demo audit, labelled by the scripted annotators
    from the unbiased score, settled and recorded (idempotent)."""
    if AnnotationProject.objects.filter(name=CUE_VALIDATION_NAME).exists():
        stdout.write(f"Judge validation demo: “{CUE_VALIDATION_NAME}” already exists; left as it is.")
        return
    audit = finished_audits().filter(name=CUE_DEMO_AUDIT_NAME).order_by("pk").first()
    truth_judge = _unbiased_judge(audit) if audit is not None else None
    if audit is None or truth_judge is None:
        stdout.write("Judge validation demo: no finished cue-sensitive judge demo audit; skipped.")
        return
    researcher = User.objects.filter(username="researcher").first()
    project = validation_project_create(
        audit=audit, per_stratum=CUE_PER_STRATUM, seed=0, name=CUE_VALIDATION_NAME, by=researcher
    )
    stage = project.stages.get()
    labellers = _labellers()
    for user in labellers:
        _pass_gate(stage, user)
    items = list(sampled_items(project))
    truth = _unbiased_scores(audit, [item.source_turn_id for item in items], truth_judge)
    questions = list(stage.questions.values_list("key", flat=True))
    labelled = {item.pk for item in items if all((item.source_turn_id, key) in truth for key in questions)}
    _label_scripted(stage, labellers, labelled, truth, "cue-demo-labels")
    _settle(stage, labellers)
    validation = project.judge_validations.get()
    validation_record(validation=validation, by=researcher)
    stdout.write(
        f"Judge validation demo: “{project.name}” — {len(labelled)} sampled turns ({CUE_PER_STRATUM} per tutor × "
        f"domain × condition) labelled by {', '.join(DEMO_LABELLERS)} (scripted, following the unbiased "
        "rule-based score), settled and recorded."
    )
