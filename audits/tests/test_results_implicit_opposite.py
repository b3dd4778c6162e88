"""Results of an audit with implicit (name) and opposite (stated × perceived gender) conditions: the names
table (gender / ethnicity / both) and the opposite decomposition are drawn, their cells list their rows,
and a conversation-level metric's pairs page works."""

import re
from html import unescape

import pytest
from django.urls import reverse

from audits.conditions import ConditionChoice, build_conditions, default_levels, default_names
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import make_questions, simulation_endpoint

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]


@pytest.fixture
def audit():
    tutor = simulation_endpoint("names tutor")
    other = simulation_endpoint("names student+judge")
    conditions = build_conditions(
        ConditionChoice(control=False, implicit=True, names_per_cell=1, opposite=True),
        default_levels(),
        default_names(),
    )
    audit = audit_create(
        name="names audit",
        tutors=[tutor],
        student_endpoint=other,
        judge_endpoint=other,
        questions=make_questions(15),
        conditions=conditions,
    )
    audit_run_inline(audit=audit)
    return audit


def test_names_table_and_opposite_decomposition(researcher_client, audit):
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    assert 'id="implicit-mathematics"' in page and 'id="opposite-mathematics"' in page
    implicit = page[page.index('id="implicit-mathematics"') :]
    implicit = implicit[: implicit.index("</figure>")]
    for row in ("gender", "ethnicity", "both"):
        assert f">{row}</text>" in implicit
    opposite = page[page.index('id="opposite-mathematics"') :]
    opposite = opposite[: opposite.index("</figure>")]
    for component in ("correct_gap", "wrong_gap", "tutor_effect", "simulator_effect", "interaction"):
        assert f">{component}</text>" in opposite

    cell_links = re.findall(r'href="(/audits/results/\d+/cell/\?[^"]*kind=opposite[^"]*)"', opposite)
    assert len(cell_links) == 5
    rows = researcher_client.get(unescape(cell_links[0])).content.decode()
    assert "correct_gap: stated female / perceived female → stated male / perceived male" in rows
    assert rows.count("/pairs/?") == 5  # one row per turn-level metric


def test_conversation_metric_pairs_page(researcher_client, audit):
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    conversation = page[page.index('id="conversation"') :]
    link = re.search(r'href="([^"]*metric=tutor_avg_word[^"]*)"', conversation)
    assert link
    pairs = researcher_client.get(unescape(link.group(1)))
    assert pairs.status_code == 200
    text = pairs.content.decode()
    assert "tutor_avg_word" in text and "Side by side" in text and 'class="side side-b"' in text
