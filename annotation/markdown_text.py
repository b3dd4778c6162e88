"""User text (guidelines, comments) as Markdown, with anything outside a short list of tags removed."""

from __future__ import annotations

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

ALLOWED_TAGS = {
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "ul",
    "ol",
    "li",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "a",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}


def markdown_safe(text: str, *, keep_text: bool = False) -> SafeString:
    """Markdown to HTML, cleaned by nh3 to ALLOWED_TAGS (links keep only href and title). With
    `keep_text` (comments: what a person wrote is shown), a removed tag's text stays, script's included, as
    plain text; otherwise script and style are dropped with their content."""
    html = markdown.markdown(text or "", extensions=["tables", "sane_lists"])
    options = {"clean_content_tags": set()} if keep_text else {}
    cleaned = nh3.clean(html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}}, **options)
    return mark_safe(cleaned)  # noqa: S308
