"""User text (guidelines, comments) as Markdown, with anything outside a short list of tags removed."""

from __future__ import annotations

import re

import markdown
import nh3
from django.utils.html import linebreaks
from django.utils.safestring import SafeString, mark_safe

# Python-Markdown finds a link, an image or an HTML tag by scanning from each "[", "(" or "<" to its closing bracket:
# text of many unclosed or deeply nested brackets costs the square of its length (10,000 "[" took 22 s per page
# view), and lists nested a few hundred deep exceed the interpreter's recursion limit (a 500 on every page showing
# the comment). Such text is shown as plain paragraphs instead. The budget counts characters scanned; real text —
# a guideline with hundreds of links — stays far below it.
SCAN_BUDGET = 1_000_000
# Longer text is shown as plain paragraphs too: Markdown costs some microseconds a character (a 400 KB guideline of
# links took 2 s), and a comment can be as long as a request body.
MAX_MARKDOWN_CHARS = 100_000
MAX_NESTING = 40  # list and quote levels at the start of a line (4 spaces of indentation count as one)
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n")
_BRACKET = re.compile(r"[\[\]()<>]")
_OPENS = {"]": "[", ")": "("}
_LINE_NESTING = re.compile(r"^([ \t]*)((?:>[ \t]*|(?:[-*+]|\d{1,9}[.)])[ \t]+)*)", re.MULTILINE)
_MARKER = re.compile(r">|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])")

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
    text = text or ""
    if len(text) > MAX_MARKDOWN_CHARS or scan_cost(text) > SCAN_BUDGET or nesting(text) > MAX_NESTING:
        html = linebreaks(text, autoescape=True)
    else:
        try:
            html = markdown.markdown(text, extensions=["tables", "sane_lists"])
        except RecursionError:
            html = linebreaks(text, autoescape=True)
    options = {"clean_content_tags": set()} if keep_text else {}
    cleaned = nh3.clean(html, tags=ALLOWED_TAGS, attributes={"a": {"href", "title"}}, **options)
    return mark_safe(cleaned)  # noqa: S308


def scan_cost(text: str) -> int:
    """Characters Python-Markdown's link and tag patterns scan, at most: from each "[" or "(" to its closing bracket
    (or the end of its paragraph) and from each "<" to the next ">" (or that end). Linear in the text."""
    total = 0
    for block in _BLOCK_BREAK.split(text):
        open_at: dict[str, list[int]] = {"[": [], "(": []}
        angles = angle_sum = 0
        for match in _BRACKET.finditer(block):
            char, at = match.group(), match.start()
            if char in open_at:
                open_at[char].append(at)
            elif char in _OPENS:
                if open_at[_OPENS[char]]:
                    total += at - open_at[_OPENS[char]].pop()
            elif char == "<":
                angles, angle_sum = angles + 1, angle_sum + at
            else:
                total += angles * at - angle_sum
                angles = angle_sum = 0
        end = len(block)
        total += sum(end - at for opens in open_at.values() for at in opens) + angles * end - angle_sum
    return total


def nesting(text: str) -> int:
    """The deepest list or quote nesting a line asks for: its markers ("- ", "> ", "1. ") and indentation."""
    deepest = 0
    for match in _LINE_NESTING.finditer(text):
        indent = len(match.group(1).expandtabs(4)) // 4
        depth = indent + len(_MARKER.findall(match.group(2)))
        deepest = max(deepest, depth)
    return deepest
