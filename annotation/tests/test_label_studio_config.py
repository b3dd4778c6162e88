"""The Label Studio label config (one <Choices> per question, Unsure and n/a when allowed, the item as text
or dialogue), the one data layout per project, the provenance text and the salted pseudonyms — pure, no
database."""

import xml.etree.ElementTree as ET

import pytest

from annotation.label_studio.config import (
    DIALOGUE,
    TEXT,
    UNSURE,
    ChoiceQuestion,
    config_names,
    label_config,
    layout_for,
    task_data,
)
from annotation.label_studio.provenance import ProvenanceInvalid, provenance_parse, provenance_text
from annotation.label_studio.pseudonyms import annotator_email
from annotation.label_studio.reading import read_label_studio_export

VALID = ChoiceQuestion(
    key="domain_valid", prompt="Is the question valid?", choices=(("valid", "Valid"), ("invalid", "Invalid"))
)
RISK = ChoiceQuestion(
    key="risk", prompt="Risk & <tone>?", choices=(("yes", "Yes"), ("no", "No"), ("n/a", "Not applicable")), unsure=True
)


def _choices(xml: str) -> dict[str, list[str]]:
    view = ET.fromstring(xml)
    assert view.tag == "View"
    return {c.get("name"): [x.get("value") for x in c.iter("Choice")] for c in view.iter("Choices")}


def test_one_choices_per_question_with_unsure_and_not_applicable_only_where_allowed():
    xml = label_config([VALID, RISK], TEXT)
    assert _choices(xml) == {"domain_valid": ["valid", "invalid"], "risk": ["yes", "no", "n/a", UNSURE]}
    view = ET.fromstring(xml)
    assert {c.get("toName") for c in view.iter("Choices")} == {"item"}
    assert view.find("Text").get("value") == "$text" and view.find("Paragraphs") is None
    assert "Risk & <tone>?" in [h.get("value") for h in view.iter("Header")]  # escaped by the XML writer
    textareas = {t.get("name") for t in view.iter("TextArea")}
    assert textareas == {"domain_valid_justification", "risk_justification", "provenance"}


def test_dialogue_layout_reads_one_key():
    view = ET.fromstring(label_config([VALID], DIALOGUE))
    paragraphs = view.find("Paragraphs")
    assert paragraphs.get("name") == "item" and paragraphs.get("value") == "$dialogue"
    assert view.find("Text") is None
    with pytest.raises(ValueError, match="layout"):
        label_config([VALID], "video")


def test_question_keys_that_take_the_configs_own_names_still_give_a_config_whose_names_are_unique():
    keys = ["item", "provenance", "q1", "q1_justification"]
    questions = [ChoiceQuestion(key=key, prompt=key, choices=(("a", "A"), ("b", "B"))) for key in keys]
    view = ET.fromstring(label_config(questions, TEXT))
    tags = [element.get("name") for element in view.iter() if element.get("name")]
    assert len(tags) == len(set(tags)) == 2 * len(keys) + 2
    names = config_names(keys)
    assert (names.item, names.provenance) == ("item_", "provenance_")
    assert names.justifications["q1"] == "q1_justification_"  # the key q1_justification is a question
    assert {c.get("toName") for c in view.iter("Choices")} == {"item_"} == {view.find("Text").get("name")}
    region = {"from_name": "q1_justification_", "type": "textarea", "value": {"text": ["because"]}}
    task = {
        "id": 1,
        "data": {"text": "t"},
        "annotations": [
            {
                "completed_by": 3,
                "result": [
                    {"from_name": "q1", "type": "choices", "value": {"choices": ["a"]}},
                    {"from_name": "q1_justification", "type": "choices", "value": {"choices": ["b"]}},
                    region,
                ],
            }
        ],
    }
    read = read_label_studio_export([task], {q.key: q for q in questions})
    assert read.errors == []
    answers = read.tasks[0].annotations[0].answers
    assert answers["q1"].justification == "because" and answers["q1_justification"].value == "b"


def test_a_project_mixing_text_and_dialogue_gets_one_layout_every_task_fits():
    text = {"text": "What is 3/4 + 1/8?"}
    dialogue = {"turns": [{"role": "student", "text": "Hi"}, {"role": "tutor", "text": "Hello"}], "highlight": 1}
    assert layout_for([text]) == TEXT
    layout = layout_for([text, dialogue])
    assert layout == DIALOGUE
    datas = [task_data(p, layout) for p in (text, dialogue)]
    assert all(set(d) == {"dialogue", "focus"} for d in datas)
    assert datas[0]["dialogue"] == [{"author": "item", "text": "What is 3/4 + 1/8?"}]
    assert datas[1]["dialogue"][1] == {"author": "tutor", "text": "Hello"}
    assert datas[1]["focus"] == "Label turn 2 (tutor)"
    assert task_data(dialogue, TEXT) == {"text": "student: Hi\ntutor: Hello"}


def test_provenance_round_trips_and_refuses_unknown_keys():
    fields = {"kind": "label", "stage": 2, "phase": "main", "round": "post", "labelled_at": "2026-01-02T03:04:05+00:00"}
    text = provenance_text(fields)
    assert text == "kind=label; stage=2; phase=main; round=post; labelled_at=2026-01-02T03:04:05+00:00"
    assert provenance_parse(text) == {key: str(value) for key, value in fields.items()}
    anonymous = provenance_text({**fields, "annotator": "anon-0123456789ab"})
    assert "annotator=anon-0123456789ab; labelled_at=" in anonymous
    assert provenance_parse(anonymous)["annotator"] == "anon-0123456789ab"
    for bad in ("reviewer=A01", "kind=guess", "stage=two", "no pairs here"):
        with pytest.raises(ProvenanceInvalid):
            provenance_parse(bad)


def test_pseudonyms_are_stable_per_person_and_change_with_the_salt():
    first, again, other = annotator_email(7, "salt-a"), annotator_email(7, "salt-a"), annotator_email(8, "salt-a")
    assert first == again and first != other
    assert annotator_email(7, "salt-b") != first
    local, domain = first.split("@")
    assert domain == "pseudonyms.invalid" and local.startswith("annotator-")
    assert len(local) == len("annotator-") + 16 and int(local[len("annotator-") :], 16) >= 0  # a hash, not the id
