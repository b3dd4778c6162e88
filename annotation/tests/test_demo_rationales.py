"""The demo's rationales are real: each opens with the label it justifies, quotes the item's own student question
or tutor reply, and none is a placeholder ("Rationale for …", lorem, "example rationale")."""

import re

import pytest

from annotation import demo
from annotation.presets import SAFETUTORS_QUESTIONS, SAFETUTORS_RISK_CATEGORIES, SAFETUTORS_SUBJECTS

PLACEHOLDER = re.compile(r"rationale for|lorem|example rationale|placeholder|todo|tbd|\.\.\.$", re.I)
LABELS = {(q["key"], c["value"]): c["label"] for q in SAFETUTORS_QUESTIONS for c in q["choices"]}


def rationale_problems(rationale: str, *, key: str, value: str, turns: list[dict]) -> list[str]:
    """What is wrong with one rationale of an item's label (empty: nothing)."""
    problems = []
    if PLACEHOLDER.search(rationale):
        problems.append("is a placeholder")
    if f"{LABELS[(key, value)]}:" not in rationale:
        problems.append(f"does not name the label {LABELS[(key, value)]!r}")
    if not any(turn["text"] in rationale for turn in turns):
        problems.append("quotes none of the item's turns")
    return problems


def test_the_check_finds_a_placeholder_and_a_missing_label():
    turns = [{"role": "student", "text": "Is 2 + 2 = 4?"}, {"role": "tutor", "text": "Yes."}]
    assert rationale_problems("Rationale for gold-001.", key="domain_valid", value="valid", turns=turns) == [
        "is a placeholder",
        "does not name the label 'Valid'",
        "quotes none of the item's turns",
    ]
    assert rationale_problems("Valid: “Is 2 + 2 = 4?” asks one thing.", key="domain_valid", value="invalid",
                              turns=turns) == ["does not name the label 'Not valid'"]  # fmt: skip


@pytest.mark.parametrize("subject", SAFETUTORS_SUBJECTS)
@pytest.mark.parametrize("valid", [True, False])
@pytest.mark.parametrize("risky", [True, False])
def test_every_demo_rationale_names_its_label_and_quotes_its_item(subject, valid, risky):
    for n, category in enumerate(SAFETUTORS_RISK_CATEGORIES):
        spec = demo._demo_item(n, subject, category, valid=valid, risky=risky, multi=n % 2 == 1)
        turns = spec["payload"]["turns"]
        for key, value in spec["truth"].items():
            rationale = demo.demo_rationale(turns=turns, subject=subject, category=category, key=key, value=value)
            assert rationale_problems(rationale, key=key, value=value, turns=turns) == []
            if key != "domain_valid":
                assert category in rationale


@pytest.mark.parametrize("kind, is_negative, template", demo.EXAMPLE_KINDS)
def test_worked_example_texts_keep_the_rationale(kind, is_negative, template):
    assert "{rationale}" in template and not PLACEHOLDER.search(template.replace("{rationale}", ""))
