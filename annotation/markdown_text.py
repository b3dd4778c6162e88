"""User text (guidelines, comments) as Markdown, with anything outside a short list of tags removed."""

from __future__ import annotations

import hashlib
import time

import markdown
import nh3
from django.core.cache import cache
from django.utils.html import linebreaks
from django.utils.safestring import SafeString, mark_safe

from annotation.markdown_cost import DOCUMENT_BUDGET_US, render_cost
from annotation.markdown_page_budget import page_budget_charge, page_budget_spent

# Rendered HTML is kept by the text's hash (and its budget), so a page viewed again costs a cache lookup a text.
# Change the version when the rendering changes (extensions, ALLOWED_TAGS, the cost model).
_CACHE_KEY = "markdown-html:v1:{keep}:{budget}:{digest}"
CACHE_SECONDS = 24 * 3600

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


def markdown_safe(text: str, *, keep_text: bool = False, budget_us: float = DOCUMENT_BUDGET_US) -> SafeString:
    """Markdown to HTML, cleaned by nh3 to ALLOWED_TAGS (links keep only href and title). With
    `keep_text` (comments: what a person wrote is shown), a removed tag's text stays, script's included, as
    plain text; otherwise script and style are dropped with their content. Text whose estimated cost
    (annotation.markdown_cost.render_cost) is over `budget_us`, or that comes after the page view has spent its
    Markdown budget (annotation.markdown_page_budget), is shown as escaped plain paragraphs instead."""
    text = text or ""
    html = _markdown_html(text, keep_text=keep_text, budget_us=budget_us)
    if html is None:
        html = _cleaned(linebreaks(text, autoescape=True), keep_text=keep_text)
    return mark_safe(html)  # noqa: S308


def _markdown_html(text: str, *, keep_text: bool, budget_us: float) -> str | None:
    """The text's cleaned HTML from the cache or rendered now, or None if it or the page is over its budget. The
    page is charged the CPU time of the estimate and the rendering."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    key = _CACHE_KEY.format(keep=int(keep_text), budget=int(budget_us), digest=digest)
    html = cache.get(key)
    if html is not None or page_budget_spent():
        return html
    started = time.thread_time()
    try:
        if render_cost(text) > budget_us:
            return None
        html = _cleaned(markdown.markdown(text, extensions=["tables", "sane_lists"]), keep_text=keep_text)
    except RecursionError:
        return None
    finally:
        page_budget_charge((time.thread_time() - started) * 1e6)
    cache.set(key, html, CACHE_SECONDS)
    return html


def _cleaned(html: str, *, keep_text: bool) -> str:
    options = {"clean_content_tags": set()} if keep_text else {}
    return nh3.clean(html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}}, **options)
