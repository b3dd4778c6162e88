"""The demo seeds a SafeTutors-preset project with items, gold, worked examples, training sets and
annotators at different steps; running it twice changes nothing. Its content holds up:
every item is a distinct text and its gold is what the text shows, so a careful annotator — one who reads
each item and slips once in fifteen — passes every stage's pilot with at least 90 %, while careless ones
(always the commonest answer, or a coin) fail; stages share training items only when they ask different
questions; and one real disagreement of stage 1's main labelling is in an open discussion."""

import io
import random
import re
from collections import Counter

import pytest

from annotation import demo
from annotation.demo import DEMO_PROJECT_NAME, demo_seed
from annotation.models import AnnotationProject, Enrollment, GoldLabel, Item, Thread, TrainingItem, WorkedExample
from annotation.selectors.projects import pass_rate_table
from annotation.selectors.training import training_progress
from annotation.workflow.gate import GoldComparison, gold_score
from annotation.workflow.training import next_step
from edufair_web.accounts.demo import demo_users_seed

from .test_demo_rationales import rationale_problems

pytestmark = pytest.mark.django_db


def test_demo_seed_builds_annotators_at_different_steps_and_is_idempotent():
    demo_users_seed()
    demo_seed(io.StringIO())
    project = AnnotationProject.objects.get(name=DEMO_PROJECT_NAME)
    assert project.preset == "safetutors" and project.stages.count() == 3
    assert GoldLabel.objects.filter(item__project=project).exists()
    assert WorkedExample.objects.filter(stage__project=project).count() == 3 * 33
    stage1 = project.stages.get(order=1)
    steps = {e.user.username: next_step(training_progress(e)).value for e in Enrollment.objects.filter(stage=stage1)}
    assert steps == {
        "annotator": "guideline",
        "annotator2": "passed",
        "annotator3": "pilot",
        "annotator4": "failed",
        "annotator5": "passed",
    }
    row = pass_rate_table(project)[0]
    assert row["pass_rate_text"] == "2 of 3 (66.7%)"
    _content_holds_up(project)
    _rationales_are_real(project)

    items = Item.objects.count()
    out = io.StringIO()
    demo_seed(out)
    assert Item.objects.count() == items
    assert AnnotationProject.objects.filter(name=DEMO_PROJECT_NAME).count() == 1
    assert "already exists" in out.getvalue()


def _rationales_are_real(project) -> None:
    """Every stored gold and worked-example rationale names its label and quotes its item (no placeholder)."""
    rows = [
        (g.rationale, g.question.key, g.value, g.item)
        for g in GoldLabel.objects.filter(item__project=project).select_related("question", "item")
    ]
    rows += [
        (w.rationale, w.question.key, w.value, w.item)
        for w in WorkedExample.objects.filter(stage__project=project).select_related("question", "item")
    ]
    for rationale, key, value, item in rows:
        assert rationale_problems(rationale, key=key, value=value, turns=item.payload["turns"]) == [], rationale


def _pattern(template: str) -> re.Pattern:
    return re.compile(re.sub(r"\\\{\w\\\}", r"\\d+", re.escape(template)).replace("\\{", "{"))


def careful_reading(item: Item) -> dict[str, str]:
    """What a careful annotator concludes from the text alone (the demo's content rules, not its gold)."""
    question, reply = item.payload["turns"][0]["text"], item.payload["turns"][-1]["text"]
    valid = not _pattern(demo.INVALID_QUESTIONS[item.subject]).fullmatch(question)
    risky = not reply.startswith(demo.SOUND_REPLY.split("{")[0])
    return {"domain_valid": "valid" if valid else "invalid", "risk_aligned": "aligned" if risky else "misaligned",
            "crowd_check": "yes" if risky else "no"}  # fmt: skip


def _content_holds_up(project) -> None:
    items = list(project.items.all())
    texts = [" | ".join(turn["text"] for turn in item.payload["turns"]) for item in items]
    assert len(set(texts)) == len(items) == 33 * demo.GOLD_PER_CELL + 33 + demo.MAIN_ITEMS
    rows = GoldLabel.objects.filter(item__project=project).values_list("item_id", "question__key", "value")
    gold = {(item_id, key): value for item_id, key, value in rows}
    by_id = {item.pk: item for item in items}
    assert all(careful_reading(by_id[item_id])[key] == value for (item_id, key), value in gold.items())

    uses = TrainingItem.objects.filter(stage__project=project)
    # No item trains two stages asking the same question (the three stages ask three different questions, so
    # they may share gold items: the gold of one question answers none of the others).
    questions = {stage.pk: set(stage.questions.values_list("pk", flat=True)) for stage in project.stages.all()}
    trained: dict[int, set[int]] = {}
    for item_id, stage_id in uses.values_list("item_id", "stage_id"):
        assert not trained.setdefault(item_id, set()) & questions[stage_id]
        trained[item_id] |= questions[stage_id]
    for stage in project.stages.order_by("order"):
        key = stage.questions.get().key
        pilot = [by_id[i] for i in uses.filter(stage=stage, phase="pilot").values_list("item_id", flat=True)]
        assert len(pilot) == stage.pilot_size
        values = [c["value"] for c in stage.questions.get().choices]
        careful = [careful_reading(item)[key] for item in pilot]
        for slip in range(7, len(pilot), 15):  # once in fifteen, the other answer
            careful[slip] = next(v for v in values if v != careful[slip])
        answer_sets = {"careful": careful}
        commonest = Counter(gold[(item.pk, key)] for item in pilot).most_common(1)[0][0]
        answer_sets["always the commonest"] = [commonest] * len(pilot)
        scores = {
            who: gold_score(
                [GoldComparison(value=a, gold=gold[(i.pk, key)]) for a, i in zip(answers, pilot, strict=True)], "strict"
            )
            for who, answers in answer_sets.items()
        }
        assert scores["careful"].agreement >= 0.9, (stage.name, scores["careful"])
        assert scores["always the commonest"].agreement < stage.pilot_threshold, stage.name
        # Coin-flippers: one in fifteen items' worth of luck can carry one through, so count how many pass.
        coins = [random.Random(stage.order * 1000 + k) for k in range(200)]
        passing = sum(
            gold_score(
                [GoldComparison(value=coin.choice(values), gold=gold[(i.pk, key)]) for i in pilot], "strict"
            ).agreement
            >= stage.pilot_threshold
            for coin in coins
        )
        assert passing <= 10, (stage.name, passing)  # at most 5 % of 200 coins pass

    stage1 = project.stages.get(order=1)
    assert set(stage1.main_items.values_list("item__external_id", flat=True)) == {f"main-{m:03d}" for m in range(12)}
    thread = Thread.objects.get(stage=stage1, kind=Thread.Kind.ADJUDICATION)
    labels = thread.item.assignments.filter(stage=stage1).values_list("annotator__username", "labels__value")
    assert thread.is_open and len(dict(labels)) == 2 and len(set(dict(labels).values())) == 2
    assert thread.comments.filter(author__username="annotator2").exists()
