"""`markdown`: user text (a comment) rendered as safe Markdown within a note's budget (annotation.markdown_text)."""

from django import template

from annotation.markdown_cost import NOTE_BUDGET_US
from annotation.markdown_text import markdown_safe

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str):
    return markdown_safe(text, keep_text=True, budget_us=NOTE_BUDGET_US)
