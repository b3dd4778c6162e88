"""`markdown`: user text (a comment) rendered as safe Markdown (annotation.markdown_text)."""

from django import template

from annotation.markdown_text import markdown_safe

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str):
    return markdown_safe(text, keep_text=True)
