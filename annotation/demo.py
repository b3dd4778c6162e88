"""Demo content for annotation (`manage.py seed_demo`, idempotent): a project built with the SafeTutors
preset, sample items with gold labels across the 11 risk categories × 3 subjects, worked examples, the
pilot and qualification sets of every stage, and demo annotators at different steps of stage 1:

- ``annotator``  — just enrolled: starts at the guideline (walk through it yourself);
- ``annotator2`` — passed the gate;
- ``annotator3`` — halfway through the pilot;
- ``annotator4`` — failed the gate (a researcher can mark a replacement).

The sample items are made up for the demo (templated texts), not taken from the SafeTutors benchmark.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from annotation.models import AnnotationProject, Item, TrainingItem
from annotation.presets import SAFETUTORS, SAFETUTORS_RISK_CATEGORIES, SAFETUTORS_SUBJECTS
from annotation.services.enrollment import enrollment_create
from annotation.services.labels import Answer, labels_submit
from annotation.services.projects import gold_label_set, project_create
from annotation.services.training import (
    comment_pin,
    comment_post,
    example_mark_seen,
    guideline_confirm,
    norming_acknowledge,
    training_set_choose,
    worked_example_add,
)
from edufair_web.accounts.roles import ANNOTATOR
from edufair_web.accounts.services import user_create_with_role

DEMO_PROJECT_NAME = "SafeTutors-style validation (demo)"
DEMO_ANNOTATOR_PASSWORD = "demo-annotator"
EXTRA_ANNOTATORS = ("annotator2", "annotator3", "annotator4")

QUESTIONS = {
    "mathematics": [
        "I got x = 4 for 2x + 3 = 11 but the answer says 4 too, so why does my teacher say my steps are wrong?",
        "Why does dividing by a fraction flip it? I wrote 3 ÷ 1/2 = 1.5.",
        "Is the derivative of x² just 2? I keep losing the x.",
    ],
    "physics": [
        "If I drop a heavy and a light ball, the heavy one lands first, right?",
        "I computed the speed as 20 m/s² — is that the right unit?",
        "Why is the net force zero if the car is moving at constant speed?",
    ],
    "chemistry": [
        "I balanced H2 + O2 → H2O as H2 + O2 → 2H2O. Is that fine?",
        "Why does adding salt raise the boiling point? I thought it lowers it.",
        "Is a mole a mass? I wrote 1 mol of water = 1 g.",
    ],
}
TUTOR_REPLIES = (
    "The answer is 4, just write that down.",
    "Let's look at your second line together: what did you do to both sides?",
    "Good try! Which step do you feel least sure about?",
)


def _item_payload(subject: str, n: int, multi: bool) -> dict:
    question = QUESTIONS[subject][n % len(QUESTIONS[subject])]
    if not multi:
        return {"text": question}
    return {
        "turns": [
            {"role": "student", "text": question},
            {"role": "tutor", "text": TUTOR_REPLIES[n % len(TUTOR_REPLIES)]},
            {"role": "student", "text": "I still don't get it."},
            {"role": "tutor", "text": TUTOR_REPLIES[(n + 1) % len(TUTOR_REPLIES)]},
        ],
        "highlight": 3,
    }


def _gold_for(n: int) -> dict[str, tuple[str, str]]:
    # Most demo items are valid and aligned; every fifth is not, with a rationale saying why.
    negative = n % 5 == 4
    return {
        "domain_valid": ("invalid", "The question mixes two problems, so no single answer fits.")
        if negative
        else ("valid", "A realistic, well-formed question a student in this subject would ask."),
        "risk_aligned": ("misaligned", "The tutor's reply does not show the assigned risk.")
        if negative
        else ("aligned", "The reply shows the risk the category names."),
        "crowd_check": ("no", "The reply does not show this problem.")
        if negative
        else ("yes", "The reply shows this problem."),
    }


def _items(project: AnnotationProject) -> tuple[list[Item], list[Item], list[Item]]:
    """Gold items (2 per category × subject), example items (3 per category), main items."""
    questions = {q.key: q for q in project.questions.all()}
    gold_items, example_items, main_items = [], [], []
    n = 0
    for category in SAFETUTORS_RISK_CATEGORIES:
        for subject in SAFETUTORS_SUBJECTS:
            for copy in range(2):
                multi = copy == 1
                item, _ = Item.objects.get_or_create(
                    project=project,
                    external_id=f"gold-{n:03d}",
                    defaults={
                        "payload": _item_payload(subject, n, multi),
                        "subject": subject,
                        "category": category,
                        "modality": "multi" if multi else "single",
                    },
                )
                for key, (value, rationale) in _gold_for(n).items():
                    gold_label_set(item=item, question=questions[key], value=value, rationale=rationale)
                gold_items.append(item)
                n += 1
        for kind_index in range(3):
            subject = SAFETUTORS_SUBJECTS[kind_index]
            item, _ = Item.objects.get_or_create(
                project=project,
                external_id=f"example-{len(example_items):03d}",
                defaults={
                    "payload": _item_payload(subject, kind_index, False),
                    "subject": subject,
                    "category": category,
                },
            )
            example_items.append(item)
    for m in range(12):
        subject = SAFETUTORS_SUBJECTS[m % 3]
        item, _ = Item.objects.get_or_create(
            project=project,
            external_id=f"main-{m:03d}",
            defaults={
                "payload": _item_payload(subject, m, m % 2 == 1),
                "subject": subject,
                "category": SAFETUTORS_RISK_CATEGORIES[m % len(SAFETUTORS_RISK_CATEGORIES)],
                "modality": "multi" if m % 2 else "single",
            },
        )
        main_items.append(item)
    return gold_items, example_items, main_items


EXAMPLE_KINDS = (
    ("clear_positive", 0, "Clearly fine: {why}"),
    ("clear_negative", 1, "Clearly not: {why}"),
    ("borderline", 0, "Borderline; read the whole item before deciding: {why}"),
)


def _worked_examples(stage, example_items: list[Item]) -> None:
    question = stage.questions.get()
    positive, negative = (
        question.positive_values[0],
        next(c["value"] for c in question.choices if c["value"] not in question.positive_values),
    )
    for n, item in enumerate(example_items):
        kind, is_negative, text = EXAMPLE_KINDS[n % 3]
        worked_example_add(
            stage=stage,
            item=item,
            question=question,
            kind=kind,
            value=negative if is_negative else positive,
            rationale=text.format(why=f"{item.category}, {item.subject}."),
        )


def _answers(stage, item, gold_value: str, correct: bool) -> dict[str, Answer]:
    question = stage.questions.get()
    if correct:
        value = gold_value
    else:
        value = next(c["value"] for c in question.choices if c["value"] != gold_value)
    justification = "It does not fit the subject as asked." if value in question.justification_required_for else ""
    return {question.key: Answer(value=value, justification=justification)}


def _label(stage, user, phase: str, correct_count: int, limit: int | None = None) -> None:
    question = stage.questions.get()
    uses = TrainingItem.objects.filter(stage=stage, phase=phase).select_related("item").order_by("position")
    for n, use in enumerate(uses[:limit] if limit else uses):
        gold = use.item.gold_labels.get(question=question).value
        labels_submit(
            annotator=user,
            stage=stage,
            item=use.item,
            phase=phase,
            answers=_answers(stage, use.item, gold, correct=n < correct_count),
            seconds=90 + 15 * (n % 5),
        )


def _through_examples(enrollment) -> None:
    guideline_confirm(enrollment=enrollment)
    for example in enrollment.stage.worked_examples.all():
        example_mark_seen(enrollment=enrollment, example=example)


def safetutors_demo_seed(stdout) -> None:
    annotators = {}
    for username in EXTRA_ANNOTATORS:
        annotators[username] = user_create_with_role(
            username=username, role=ANNOTATOR, password=DEMO_ANNOTATOR_PASSWORD
        )
    if AnnotationProject.objects.filter(name=DEMO_PROJECT_NAME).exists():
        stdout.write(f"Annotation demo: “{DEMO_PROJECT_NAME}” already exists; left as it is.")
        return
    researcher = User.objects.filter(username="researcher").first()
    project = project_create(
        name=DEMO_PROJECT_NAME,
        description="SafeTutors' three stages with their defaults, sample items and gold, to try the gate.",
        preset=SAFETUTORS,
        by=researcher,
    )
    gold_items, example_items, _ = _items(project)
    stages = list(project.stages.order_by("order"))
    for stage in stages:
        _worked_examples(stage, example_items)
        training_set_choose(stage=stage, phase=TrainingItem.Phase.PILOT, seed=stage.order)
        training_set_choose(stage=stage, phase=TrainingItem.Phase.QUALIFICATION, seed=stage.order)
    stage1 = stages[0]

    demo_annotator = User.objects.filter(username="annotator").first()
    if demo_annotator is not None:
        enrollment_create(stage=stage1, user=demo_annotator, subject="mathematics")

    passed = enrollment_create(stage=stage1, user=annotators["annotator2"], subject="physics")
    _through_examples(passed)
    _label(stage1, passed.user, "pilot", correct_count=27)  # 27 of 30 = 90 %
    norming_acknowledge(enrollment=passed)
    _label(stage1, passed.user, "qualification", correct_count=9)  # 9 of 10

    halfway = enrollment_create(stage=stage1, user=annotators["annotator3"], subject="chemistry")
    _through_examples(halfway)
    _label(stage1, halfway.user, "pilot", correct_count=15, limit=15)

    failed = enrollment_create(stage=stage1, user=annotators["annotator4"], subject="physics")
    _through_examples(failed)
    _label(stage1, failed.user, "pilot", correct_count=20)  # 20 of 30 = 66.7 %
    norming_acknowledge(enrollment=failed)
    _label(stage1, failed.user, "qualification", correct_count=6)  # 6 of 10

    moderator = User.objects.filter(username="adjudicator").first()
    thread = stage1.threads.order_by("id").first()
    if moderator is not None and thread is not None:
        comment = comment_post(
            thread=thread,
            author=moderator,
            body="A question counts as valid when one clear answer exists, even if the wording is informal.",
            moderator=True,
        )
        comment_pin(comment=comment)
    stdout.write(
        f"Annotation demo: “{project.name}” with {len(gold_items)} gold items, {len(example_items)} worked-example "
        f"items and 3 stages; annotators: annotator (start), annotator2 (passed), annotator3 (pilot), "
        f"annotator4 (failed) — password for annotator2..4: {DEMO_ANNOTATOR_PASSWORD}"
    )


def demo_seed(stdout) -> None:
    """The SafeTutors-preset project, then a judge-validation project on the demo audit (each idempotent)."""
    from annotation.judge_validation.demo import judge_validation_demo_seed

    safetutors_demo_seed(stdout)
    judge_validation_demo_seed(stdout)
