"""The Label Studio label config of a project, and the one data layout its tasks use (pure: no database).

A project's tasks share one layout, so that one config accepts every task: ``text`` when no item has
turns (``data.text``, shown with ``<Text>``), else ``dialogue`` (``data.dialogue``, a list of
``{"author", "text"}`` shown with ``<Paragraphs>``; a text-only item becomes one paragraph) with
``data.focus`` naming the turn to label. Every question is one single-choice ``<Choices>`` named by its key,
with the Unsure and n/a values when the question allows them, and a ``<TextArea>`` for its justification;
a read-only ``provenance`` text area carries where an annotation came from (see `provenance`). Tag names
come from `config_names`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass

TEXT, DIALOGUE = "text", "dialogue"
UNSURE = "Unsure"


@dataclass(frozen=True)
class ChoiceQuestion:
    key: str
    prompt: str
    choices: tuple[tuple[str, str], ...]  # (value, label) in order, n/a included when allowed
    unsure: bool = False

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(value for value, _ in self.choices) + ((UNSURE,) if self.unsure else ())


@dataclass(frozen=True)
class ConfigNames:
    item: str  # the object tag, the to_name of every region
    provenance: str
    justifications: dict[str, str]  # question key → the name of its justification text area


def config_names(keys: Iterable[str]) -> ConfigNames:
    """Tag names beside the questions' own: ``item``, ``provenance`` and ``<key>_justification``, each with
    underscores added in the rare case a question key already takes it (so no key can break the config)."""
    keys = list(keys)
    taken = set(keys)

    def free(name: str) -> str:
        while name in taken:
            name += "_"
        taken.add(name)
        return name

    return ConfigNames(
        item=free("item"),
        provenance=free("provenance"),
        justifications={key: free(f"{key}_justification") for key in keys},
    )


def layout_for(payloads: Iterable[dict]) -> str:
    """``dialogue`` as soon as one item has turns, else ``text``."""
    return DIALOGUE if any(payload.get("turns") for payload in payloads) else TEXT


def _turn_text(turn: dict) -> str:
    return f"{turn.get('role', '')}: {turn.get('text', '')}"


def task_data(payload: dict, layout: str) -> dict:
    """The keys the config reads, for one item's payload, in the project's layout."""
    turns = payload.get("turns") or []
    text = payload.get("text") or ""
    if layout == TEXT:
        return {"text": text or "\n".join(_turn_text(turn) for turn in turns)}
    dialogue = ([{"author": "item", "text": text}] if text else []) + [
        {"author": str(turn.get("role", "")), "text": str(turn.get("text", ""))} for turn in turns
    ]
    highlight = payload.get("highlight")
    if isinstance(highlight, int) and 0 <= highlight < len(turns):
        focus = f"Label turn {highlight + 1} ({turns[highlight].get('role', '')})"
    else:
        focus = "Label the whole item"
    return {"dialogue": dialogue, "focus": focus}


def label_config(questions: Iterable[ChoiceQuestion], layout: str) -> str:
    """The ``<View>`` XML: the item, then each question's prompt, choices and justification box."""
    questions = list(questions)
    names = config_names(q.key for q in questions)
    view = ET.Element("View")
    if layout == TEXT:
        ET.SubElement(view, "Text", name=names.item, value="$text")
    elif layout == DIALOGUE:
        ET.SubElement(
            view, "Paragraphs", name=names.item, value="$dialogue", layout="dialogue", nameKey="author", textKey="text"
        )
        ET.SubElement(view, "Header", value="$focus", size="5")
    else:
        raise ValueError(f"layout is {TEXT} or {DIALOGUE}, not {layout!r}")
    for question in questions:
        ET.SubElement(view, "Header", value=question.prompt, size="4")
        choices = ET.SubElement(
            view, "Choices", name=question.key, toName=names.item, choice="single-radio", showInline="true"
        )
        for value, label in question.choices:
            attributes = {"value": value}
            if label and label != value:
                attributes["hint"] = label
            ET.SubElement(choices, "Choice", **attributes)
        if question.unsure:
            ET.SubElement(choices, "Choice", value=UNSURE, hint="Unsure: no answer")
        ET.SubElement(
            view,
            "TextArea",
            name=names.justifications[question.key],
            toName=names.item,
            rows="2",
            maxSubmissions="1",
            placeholder="Justification",
        )
    ET.SubElement(view, "Header", value="Provenance (EduFair: kind, stage, phase, round, time)", size="6")
    ET.SubElement(
        view, "TextArea", name=names.provenance, toName=names.item, rows="1", maxSubmissions="1", editable="false"
    )
    ET.indent(view)
    return ET.tostring(view, encoding="unicode")
