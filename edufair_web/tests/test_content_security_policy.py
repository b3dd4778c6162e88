"""Every page carries a Content-Security-Policy that forbids inline scripts, and no template needs one."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_DIRS = [ROOT / "templates", *ROOT.glob("*/templates")]


@pytest.mark.django_db
def test_pages_send_a_policy_without_inline_scripts(researcher_client):
    policy = researcher_client.get("/")["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    assert "unsafe-inline" not in directives["script-src"] and "unsafe-eval" not in policy
    assert directives["frame-ancestors"] == "'none'"


def test_no_template_has_inline_script_or_event_handler_attributes():
    offenders = []
    inline_script = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
    handler = re.compile(r"\s(on[a-z]+|hx-on[:\w-]*)\s*=", re.IGNORECASE)
    for folder in TEMPLATE_DIRS:
        for path in folder.rglob("*.html"):
            text = path.read_text()
            if inline_script.search(text) or handler.search(text):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
