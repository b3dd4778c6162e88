"""What an annotator is shown of a form and an item: its keys, the item's name, the turn highlighted.

The keys are those its questions really take; the highlighted turn is the one the question asked is about."""

from django import template

from annotation.workflow.choice_keys import keys_hint
from annotation.workflow.turn_focus import focused_turn, questions_focus
from edufair_web.accounts.roles import ADJUDICATOR, RESEARCHER, has_role

register = template.Library()

CAPTION_CHARS = 40


@register.filter(name="keys_hint")
def keys_hint_filter(questions) -> str:
    return keys_hint(questions)


@register.filter(name="focused_turn")
def focused_turn_filter(item, about) -> int | None:
    """The index of the item's turn to highlight for questions about ``about`` (workflow.turn_focus)."""
    return focused_turn(getattr(item, "payload", None), about or "")


@register.filter(name="stage_focus")
def stage_focus(stage) -> str:
    """What the stage's questions are about (the student's question, the tutor's turn, or '')."""
    return questions_focus(stage.questions.values_list("about_turn", flat=True)) if stage is not None else ""


@register.filter(name="item_name")
def item_name(item, user) -> str:
    """The item's external id for researchers and adjudicators; for annotators its opening words, since an id
    such as ``gold-041`` says what the item is for."""
    if user is not None and has_role(user, RESEARCHER, ADJUDICATOR):
        return item.external_id
    payload = item.payload or {}
    turns = payload.get("turns") or []
    highlight = payload.get("highlight")
    text = payload.get("text") or (
        turns[highlight]["text"] if isinstance(highlight, int) and 0 <= highlight < len(turns) else ""
    )
    text = text or (turns[0]["text"] if turns else "")
    text = " ".join(str(text).split())
    return f"“{text[: CAPTION_CHARS - 1]}…”" if len(text) > CAPTION_CHARS else f"“{text}”"
