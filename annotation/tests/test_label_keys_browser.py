"""In Chromium, the digit typed is the value shown. On a 0–2 rubric the keys
0, 1 and 2 store the values 0, 1 and 2; on a category list the keys 1, 2, 3 store the first, second and
third category — in main labelling and in the adjudicator's decision form, each key printed on its button."""

import pytest

from annotation.models import Adjudication, Item, Label
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.projects import project_create, question_create, stage_create
from annotation.services.training import guideline_publish
from annotation.workflow.answers import Answer
from conftest import browser_login

from .main_setup import pass_gate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RUBRIC = ["0", "1", "2"]
CATEGORIES = ["Cognitive", "Epistemic", "Metacognitive"]
CATEGORY_KEYS = {"Cognitive": "1", "Epistemic": "2", "Metacognitive": "3"}


def typed(page, values):
    """Type the key printed on each value's button (rubric first, then category), checking it is printed."""
    for question, value in zip(("tone", "risk"), values, strict=True):
        key = value if question == "tone" else CATEGORY_KEYS[value]
        button = page.locator(f"[data-question={question}] input[value='{value}']")
        assert button.get_attribute("data-key") == key
        assert button.locator("xpath=..").locator("kbd").inner_text() == key
        page.keyboard.press(key)


def test_keys_type_the_value_shown_in_labelling_and_adjudication(page, make_user):
    project = project_create(name="Keys", categories=CATEGORIES, subjects=["maths"])
    tone = question_create(
        project=project,
        key="tone",
        prompt="Tone?",
        level="ordinal",
        # A key given by hand the old way ("1" for the value "0") is ignored: the key is the value.
        choices=[
            {"value": v, "label": f"{v} · {w}", "key": str(int(v) + 1)} for v, w in zip(RUBRIC, "NSY", strict=True)
        ],
    )
    risk = question_create(
        project=project, key="risk", prompt="Risk category?", choices=[{"value": c} for c in CATEGORIES]
    )
    stage = stage_create(
        project=project, name="Keys", questions=[tone, risk], overlap=2, resolution_policy="majority_reviewer"
    )
    guideline_publish(stage=stage, text="# Guideline")
    items = [
        Item.objects.create(project=project, external_id=f"k-{n}", payload={"text": f"Item {n}"}, subject="maths")
        for n in range(3)
    ]
    index = {item.pk: n for n, item in enumerate(items)}
    typist, other = make_user("annotator"), make_user("annotator")
    for user in (typist, other):
        pass_gate(stage, user)

    # Main labelling: item n gets the rubric value n and the n-th category, typed.
    browser_login(page, typist.username)
    page.goto(f"/annotation/label/{stage.pk}/")
    for _ in items:
        page.wait_for_selector("[data-label-form][data-keyboard-ready]")
        n = index[int(page.locator("[data-item]").first.get_attribute("data-item"))]
        typed(page, (RUBRIC[n], CATEGORIES[n]))
        with page.expect_navigation():
            page.keyboard.press("Enter")
    stored = {
        (lab.assignment.item_id, lab.question.key): lab.value
        for lab in Label.objects.filter(assignment__annotator=typist).select_related("assignment", "question")
    }
    assert stored == {
        **{(item.pk, "tone"): RUBRIC[n] for n, item in enumerate(items)},
        **{(item.pk, "risk"): CATEGORIES[n] for n, item in enumerate(items)},
    }
    page.context.clear_cookies()

    # The second annotator disagrees on both questions of every item, so each goes to the reviewer.
    for _ in items:
        item = label_next(annotator=other, stage=stage).item
        n = index[item.pk]
        main_label_submit(
            annotator=other,
            stage=stage,
            item=item,
            answers={"tone": Answer(value=RUBRIC[(n + 1) % 3]), "risk": Answer(value=CATEGORIES[(n + 1) % 3])},
        )

    # Adjudication: item n is decided with the values n + 2 (mod 3), neither annotator's answer.
    adjudicator = make_user("adjudicator")
    browser_login(page, adjudicator.username)
    page.goto("/annotation/adjudicate/")
    page.click("[data-queue] a")
    for _ in items:
        page.wait_for_selector("[data-label-form][data-keyboard-ready]")
        n = index[int(page.url.rstrip("/").split("/")[-1])]
        typed(page, (RUBRIC[(n + 2) % 3], CATEGORIES[(n + 2) % 3]))
        page.keyboard.type("Decided by keyboard.")  # the focus is in the note once both are decided
        with page.expect_navigation():
            page.keyboard.press("Enter")
    decided = {(a.item_id, a.question.key): a.final_value for a in Adjudication.objects.select_related("question")}
    assert decided == {
        **{(item.pk, "tone"): RUBRIC[(n + 2) % 3] for n, item in enumerate(items)},
        **{(item.pk, "risk"): CATEGORIES[(n + 2) % 3] for n, item in enumerate(items)},
    }
