"""Markdown and comments cannot inject script: hostile text in a guideline, in norming comments, in a pinned
clarification (which becomes guideline Markdown) and in adjudication discussion comments is rendered
through the real pages, and the HTML those pages send contains no script of the user's making.

"Of the user's making" is read from the parsed HTML, not by searching for strings: no <script> element
other than the layout's static files, no `on…` event-handler attribute, no link or source whose scheme is
javascript:, vbscript: or data:, and no <iframe>/<object>/<embed>/<svg>/<img> the text asked for.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Thread
from annotation.services.adjudication import discussion_comment
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.training import comment_pin, comment_post, guideline_publish
from annotation.workflow.answers import Answer

from .main_setup import build_main_stage, pass_gate
from .training_setup import build_stage, enrol, label_all, through_examples

pytestmark = pytest.mark.django_db

PAYLOADS = [
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "[y](JaVaScRiPt:alert(2))",
    '<a href="javascript:alert(3)">z</a>',
    "![pic](javascript:alert(4))",
    "[ref][evil]\n\n[evil]: javascript:alert(5)",
    "<svg onload=alert(6)>",
    '<iframe src="javascript:alert(7)"></iframe>',
    "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCg4KTwvc2NyaXB0Pg==)",
    "<div onmouseover=alert(9)>hover</div>",
    "`code` <object data=javascript:alert(10)></object>",
]
HOSTILE_TEXT = "\n\n".join(PAYLOADS)
BAD_SCHEMES = ("javascript:", "vbscript:", "data:")
FORBIDDEN_TAGS = {"iframe", "object", "embed", "svg", "img"}


class ScriptFinder(HTMLParser):
    """Collects whatever in a page could run script."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "script" and not (attributes.get("src") or "").startswith("/static/"):
            self.problems.append(f"<script {attrs}>")
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag} {attrs}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}={value!r}>")
            if name in ("href", "src", "action", "formaction", "data", "xlink:href") and value:
                if value.strip().lower().replace("\t", "").replace("\n", "").startswith(BAD_SCHEMES):
                    self.problems.append(f"<{tag} {name}={value!r}>")


def script_in(html: str) -> list[str]:
    finder = ScriptFinder()
    finder.feed(html)
    return finder.problems


def page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content.decode()


def test_the_finder_sees_raw_payloads():
    """The checker catches each payload when it is NOT made safe (so a pass below means something)."""
    raw_html = "".join(
        ["<script>alert(1)</script>", '<a href="javascript:alert(1)">x</a>', "<img src=x onerror=alert(1)>"]
    )
    assert len(script_in(raw_html)) >= 3


def test_guidelines_and_norming_comments_render_safely(make_user):
    s = build_stage(pilot=4)
    guideline_publish(stage=s.stage, text="# Guideline\n\n" + HOSTILE_TEXT)
    first, second = make_user("annotator"), make_user("annotator")
    for user, values in ((first, ["yes", "no", "yes", "no"]), (second, ["yes", "yes", "yes", "no"])):
        enrollment = enrol(s, user)
        through_examples(s, enrollment)
        label_all(s, user, s.pilot_items, values, "pilot")
    thread = Thread.objects.get(stage=s.stage, kind="norming")
    moderator = make_user("adjudicator")
    # The first annotator passed the pilot (the second did not, and may not read its norming threads).
    comment_post(thread=thread, author=first, body=HOSTILE_TEXT, moderator=False)
    pinned = comment_post(thread=thread, author=moderator, body=HOSTILE_TEXT, moderator=True)
    comment_pin(comment=pinned)

    annotator, moderator_client, researcher = Client(), Client(), Client()
    annotator.force_login(first)
    moderator_client.force_login(moderator)
    researcher.force_login(make_user("researcher"))
    pages = {
        "guideline (annotator)": page(annotator, reverse("annotation:training-guideline", args=[s.stage.pk])),
        "stage (researcher)": page(researcher, reverse("annotation:stage", args=[s.stage.pk])),
        "thread (annotator)": page(annotator, reverse("annotation:thread", args=[thread.pk])),
        "thread (moderator)": page(moderator_client, reverse("annotation:thread", args=[thread.pk])),
        "moderation": page(moderator_client, reverse("annotation:moderation")),
    }
    # The pinned clarification becomes Markdown of the next guideline version.
    v2 = guideline_publish(stage=s.stage, text="# Guideline v2\n\nSee the clarifications.")
    assert "<script>alert(1)</script>" in v2.text
    pages["guideline v2 with the pin (annotator)"] = page(
        annotator, reverse("annotation:training-guideline", args=[s.stage.pk])
    )
    pages["stage v2 (researcher)"] = page(researcher, reverse("annotation:stage", args=[s.stage.pk]))

    for name, html in pages.items():
        assert script_in(html) == [], f"{name} page lets the text run script"
    # The text is still shown (escaped or as a harmless link), not silently dropped wholesale.
    assert "Guideline v2" in pages["guideline v2 with the pin (annotator)"]
    assert "alert(1)" in pages["thread (annotator)"]


def test_discussion_comments_render_safely(make_user):
    s = build_main_stage(items=1, overlap=2, policy="discussion_senior")
    users = [make_user("annotator"), make_user("annotator")]
    for user, value in zip(users, ["yes", "no"], strict=True):
        pass_gate(s.stage, user)
        item = label_next(annotator=user, stage=s.stage).item
        main_label_submit(
            annotator=user,
            stage=s.stage,
            item=item,
            answers={"q1": Answer(value=value, justification=HOSTILE_TEXT if value == "no" else "")},
        )
    item = s.items[0]
    discussion_comment(stage=s.stage, item=item, author=users[0], body=HOSTILE_TEXT)
    discussion_comment(stage=s.stage, item=item, author=users[0], body="**Settled** by `rule 2`:\n\n- one\n- two")

    annotator, adjudicator = Client(), Client()
    annotator.force_login(users[1])
    adjudicator.force_login(make_user("adjudicator"))
    pages = {
        "discussion (annotator)": page(annotator, reverse("annotation:discussion", args=[s.stage.pk, item.pk])),
        "adjudication item": page(adjudicator, reverse("annotation:adjudicate-item", args=[s.stage.pk, item.pk])),
        "adjudication queue": page(adjudicator, reverse("annotation:adjudicate")),
    }
    for name, html in pages.items():
        assert script_in(html) == [], f"{name} page lets the text run script"
    assert "alert(1)" in pages["adjudication item"]  # shown, escaped
    # Comments are Markdown: emphasis, code and lists render on every page that shows them.
    for name in ("discussion (annotator)", "adjudication item"):
        html = pages[name]
        assert "<strong>Settled</strong>" in html and "<code>rule 2</code>" in html and "<li>one</li>" in html, name
