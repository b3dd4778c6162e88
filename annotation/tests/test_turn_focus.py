"""The highlighted turn follows what the question asks about: the student's question for a question about the
student's turn, the tutor's turn for one about the tutor's, else the item's own highlight; the demo's items and the
label page use that one rule (`annotation.workflow.turn_focus`)."""

import re

import pytest
from django.urls import reverse

from annotation import demo
from annotation.models import Item, LabelQuestion
from annotation.presets import SAFETUTORS_QUESTIONS
from annotation.workflow.turn_focus import STUDENT, TUTOR, focused_turn, questions_focus

from .main_setup import build_main_stage, pass_gate

DIALOGUE = [
    {"role": "student", "text": "Is 3x + 4 = 19 solved by x = 7?"},
    {"role": "tutor", "text": "What did you try first?"},
    {"role": "student", "text": "I took 4 from both sides."},
    {"role": "tutor", "text": "Good: what is left on the right?"},
]


@pytest.mark.parametrize(
    "payload, about, expected",
    [
        ({"turns": DIALOGUE, "highlight": 3}, STUDENT, 0),  # the student's question, not their later turn
        ({"turns": DIALOGUE, "highlight": 3}, TUTOR, 3),
        ({"turns": DIALOGUE, "highlight": 2}, TUTOR, 1),  # the tutor turn before a highlighted student turn
        ({"turns": DIALOGUE}, TUTOR, 3),  # no highlight: the last tutor turn
        ({"turns": DIALOGUE, "highlight": 2}, "", 2),  # not said: the item's own highlight
        ({"turns": DIALOGUE, "highlight": 9}, "", None),
        ({"turns": [{"role": "assistant", "text": "Hi"}, {"role": "user", "text": "Q"}]}, STUDENT, 1),
        ({"turns": [{"role": "tutor", "text": "Only the tutor"}], "highlight": 0}, STUDENT, 0),
        ({"text": "No dialogue"}, TUTOR, None),
        (None, STUDENT, None),
    ],
)
def test_the_focused_turn(payload, about, expected):
    assert focused_turn(payload, about) == expected


def test_questions_asked_together_share_their_focus_or_keep_the_items():
    assert questions_focus([STUDENT, STUDENT]) == STUDENT
    assert questions_focus([STUDENT, TUTOR]) == "" and questions_focus([]) == ""


def test_the_preset_says_which_turn_each_question_judges():
    about = {q["key"]: q["about_turn"] for q in SAFETUTORS_QUESTIONS}
    assert about == {"domain_valid": STUDENT, "risk_aligned": TUTOR, "crowd_check": TUTOR}


@pytest.mark.parametrize("multi", [False, True])
def test_demo_items_highlight_the_tutor_reply_and_the_student_question_for_stage_one(multi):
    payload = demo._demo_item(4, "physics", "Cognitive", valid=True, risky=True, multi=multi)["payload"]
    turns = payload["turns"]
    assert turns[payload["highlight"]]["role"] == "tutor" and payload["highlight"] == len(turns) - 1
    for question in SAFETUTORS_QUESTIONS:
        turn = turns[focused_turn(payload, question["about_turn"])]
        if question["key"] == "domain_valid":
            assert turn == turns[0] and turn["role"] == "student"  # the question stage 1 judges
        else:
            assert turn == turns[-1] and turn["role"] == "tutor"


def _highlighted(html: str) -> list[tuple[str, str]]:
    found = re.findall(
        r'<li class="turn role-(\w+) highlight" aria-current="true">\s*<strong>\w+</strong> ([^<]*)', html
    )
    return [(role, text.strip()) for role, text in found]


@pytest.mark.django_db
@pytest.mark.parametrize("about, expected", [(STUDENT, DIALOGUE[0]), (TUTOR, DIALOGUE[1]), ("", DIALOGUE[2])])
def test_the_label_page_highlights_the_turn_the_question_is_about(client, make_user, about, expected):
    s = build_main_stage(items=1, overlap=2)
    LabelQuestion.objects.filter(pk=s.questions[0].pk).update(about_turn=about)
    Item.objects.filter(pk=s.items[0].pk).update(payload={"turns": DIALOGUE, "highlight": 2})
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    html = client.get(reverse("annotation:label", args=[s.stage.pk])).content.decode()
    assert _highlighted(html) == [(expected["role"], expected["text"])]
