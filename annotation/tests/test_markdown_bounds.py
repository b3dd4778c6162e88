"""Markdown text whose rendering would cost the square of its length (unclosed or deeply nested brackets) or
exceed the recursion limit (lists nested hundreds deep) is shown as escaped plain paragraphs, at once; ordinary
Markdown renders as before. An annotator's comment of either kind no longer stalls or breaks the pages showing it."""

import time

import pytest
from django.test import Client
from django.urls import reverse

from annotation.markdown_cost import DOCUMENT_BUDGET_US, MAX_MARKDOWN_CHARS, nesting, render_cost, scan_cost
from annotation.markdown_text import markdown_safe
from annotation.services.adjudication import discussion_comment
from annotation.services.labelling import label_next, main_label_submit
from annotation.workflow.answers import Answer

from .main_setup import build_main_stage, pass_gate

# Each took Python-Markdown from seconds to hours, or ended in a RecursionError.
HOSTILE = {
    "unclosed brackets": "[" * 100_000,  # about 40 minutes
    "unclosed images": "![" * 50_000,
    "unclosed link targets": "[a](" * 25_000,
    "unclosed tags": "<a " * 30_000,
    "deeply nested brackets": "[" * 5_000 + "]" * 5_000,
    "a list nested 2,000 deep": "- " * 2_000 + "x",  # RecursionError
    "indentation nested 600 deep": "".join("  " * level + "- x\n" for level in range(600)),
    "quotes nested 100,000 deep": ">" * 100_000 + " x",
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_markdown_is_shown_as_plain_text_at_once(name):
    text = HOSTILE[name]
    started = time.perf_counter()
    html = markdown_safe(text)
    assert time.perf_counter() - started < 1.0, name
    assert html.startswith("<p>") and "<a " not in html and "<ul>" not in html and "<blockquote>" not in html
    shown = text[:20].replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")
    assert shown in html  # shown, escaped, not dropped


def test_the_bounds_are_what_makes_the_difference():
    assert render_cost("[" * 100_000) > DOCUMENT_BUDGET_US
    assert scan_cost("[a](" * 25_000) > 10**6  # the "(" of each link target is never closed
    assert render_cost("[a](" * 25_000) > DOCUMENT_BUDGET_US
    assert nesting("- " * 2_000 + "x") == 2_000
    assert nesting("> > - 1. x") == 4
    assert nesting("        - x") == 3  # two levels of indentation and a marker


def test_ordinary_markdown_renders_as_before():
    text = (
        "# Guideline\n\n"
        'Label [each turn](https://example.org/rubric "rubric") (not the dialogue) as a whole; a < b > c.\n\n'
        "- one\n  - two\n    - three\n\n"
        "> quoted\n>> quoted twice\n\n"
        "1. first\n2. second\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n" + "-" * 80 + "\n\n" + "See [the FAQ](https://example.org/faq). " * 500
    )
    assert render_cost(text) < DOCUMENT_BUDGET_US and nesting(text) <= 3 and len(text) < MAX_MARKDOWN_CHARS
    html = markdown_safe(text)
    for expected in ("<h1>Guideline</h1>", '<a href="https://example.org/rubric" title="rubric"', "<li>three",
                     "<blockquote>", "<ol>", "<td>2</td>", "<hr>"):  # fmt: skip
        assert expected in html, expected


def test_text_longer_than_the_limit_is_plain_text():
    html = markdown_safe("**bold** " * (MAX_MARKDOWN_CHARS // 9 + 1))
    assert "<strong>" not in html and "**bold**" in html


@pytest.mark.django_db
def test_a_hostile_discussion_comment_leaves_its_pages_working(make_user):
    s = build_main_stage(items=1, overlap=2, policy="discussion_senior")
    users = [make_user("annotator"), make_user("annotator")]
    for user, value in zip(users, ["yes", "no"], strict=True):
        pass_gate(s.stage, user)
        item = label_next(annotator=user, stage=s.stage).item
        main_label_submit(
            annotator=user,
            stage=s.stage,
            item=item,
            answers={"q1": Answer(value=value, justification="why" if value == "no" else "")},
        )
    item = s.items[0]
    discussion_comment(stage=s.stage, item=item, author=users[0], body=HOSTILE["a list nested 2,000 deep"])
    discussion_comment(stage=s.stage, item=item, author=users[0], body=HOSTILE["unclosed brackets"])

    annotator, adjudicator = Client(), Client()
    annotator.force_login(users[1])
    adjudicator.force_login(make_user("adjudicator"))
    started = time.perf_counter()
    for client, url in (
        (annotator, reverse("annotation:discussion", args=[s.stage.pk, item.pk])),
        (adjudicator, reverse("annotation:adjudicate-item", args=[s.stage.pk, item.pk])),
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert "- - - - -" in response.content.decode()
    assert time.perf_counter() - started < 5.0
