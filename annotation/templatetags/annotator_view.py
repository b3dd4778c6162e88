"""What an annotator is shown of a form and an item: the keys its questions really take, and an item's name."""

from django import template

from annotation.workflow.choice_keys import keys_hint
from edufair_web.accounts.roles import ADJUDICATOR, RESEARCHER, has_role

register = template.Library()

CAPTION_CHARS = 40


@register.filter(name="keys_hint")
def keys_hint_filter(questions) -> str:
    return keys_hint(questions)


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
