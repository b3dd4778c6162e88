"""A small labelled project for the Label Studio tests: text and dialogue items (or text only), two annotators who
disagree and settle in discussion (before- and after-discussion labels, an adjudicated final), a gold
label on a training item."""

from __future__ import annotations

from annotation.models import Adjudication, GoldLabel, Item, TrainingItem
from annotation.services.adjudication import discussion_answers_submit, discussion_close
from annotation.services.labelling import label_next, main_label_submit
from annotation.workflow.answers import Answer

from .main_setup import build_main_stage, pass_gate

JUSTIFICATION = '=HYPERLINK("http://evil","x")'


def labelled_project(make_user, *, name: str = "Label Studio test", users=None, dialogue: bool = True):
    s = build_main_stage(items=2, overlap=2, policy="discussion_senior", name=name)
    if dialogue:
        Item.objects.filter(pk=s.items[1].pk).update(
            payload={
                "turns": [{"role": "student", "text": "Why?"}, {"role": "tutor", "text": "Because."}],
                "highlight": 1,
            },
            modality="multi",
        )
    training = Item.objects.create(project=s.project, external_id="gold-0", payload={"text": "A gold item"})
    TrainingItem.objects.create(stage=s.stage, item=training, phase="pilot")
    GoldLabel.objects.create(item=training, question=s.questions[0], value="yes", rationale="clear")
    users = users or [make_user("annotator", username=f"real-name-{n}") for n in range(2)]
    for user in users:
        pass_gate(s.stage, user)
    disputed = None
    for _ in range(2):
        for user, value in zip(users, ["yes", "no"], strict=True):
            item = label_next(annotator=user, stage=s.stage).item
            disputed = disputed or item
            value = value if item == disputed else "yes"
            answers = {"q1": Answer(value=value, justification=JUSTIFICATION if value == "no" else "")}
            main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers, seconds=33)
    discussion_answers_submit(stage=s.stage, item=disputed, annotator=users[1], answers={"q1": Answer(value="yes")})
    discussion_close(stage=s.stage, item=disputed)
    s.users, s.disputed, s.training = users, disputed, training
    s.finals = list(Adjudication.objects.filter(stage=s.stage))
    return s
