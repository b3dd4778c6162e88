"""The results pages of a finished simulated audit: heatmaps with the planted cell flagged, the summary
cell's rows, the contrast's pairs with side-by-side transcripts, the methods box, the simulation label,
the parameter form, and researchers-only access.

`results_audit()` is shared by the other results, export and dashboard tests: two simulated tutors over
20 questions under first_language (and the control); tutor B has a strong planted tone bias against
non-English-L1 students, tutor A none.
"""

import re
from html import unescape

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from audits.models import Audit
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, scored_audit, simulation_endpoint
from audits.tests.query_plans import index_scans, leading_columns, plans
from conftest import service_missing

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]

STRONG_BIAS = [{"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -0.45}]


def results_audit(name: str = "results audit", questions: int = 20) -> Audit:
    fair = simulation_endpoint(f"{name} tutor A")
    biased = simulation_endpoint(f"{name} tutor B", bias=STRONG_BIAS)
    other = simulation_endpoint(f"{name} student+judge")
    audit = audit_create(
        name=name,
        tutors=[fair, biased],
        student_endpoint=other,
        judge_endpoint=other,
        questions=make_questions(questions),
        conditions=explicit_conditions(("first_language",)),
    )
    audit_run_inline(audit=audit)
    audit.refresh_from_db()
    assert audit.status == Audit.Status.FINISHED
    return audit


def planted_cell_anchor(page: str, tutor_id: int) -> str:
    """The <a ...> opening tag of the level-vs-level heatmap cell (first_language, corrective_tone)."""
    pattern = (
        rf'<a [^>]*class="([^"]*)"[^>]*data-tutor="{tutor_id}"[^>]*data-dimension="first_language"'
        rf'[^>]*data-level-a="english_l1"[^>]*data-level-b="non_english_l1"[^>]*data-metric="corrective_tone"[^>]*>'
    )
    match = re.search(pattern, page)
    assert match, "the planted cell is missing from the heatmaps"
    return match.group(0)


@pytest.fixture
def audit():
    return results_audit()


def test_results_page_flags_the_planted_cell_and_not_the_fair_tutor(researcher_client, audit):
    fair, biased = sorted(audit.tutors.values_list("pk", flat=True))
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    assert "SIMULATION" in page and "simulation-banner" in page
    biased_cell = planted_cell_anchor(page, biased)
    assert "violation" in biased_cell.split('class="')[1].split('"')[0]
    # a violation's CI excludes 0: coloured by its sign, never grey (audits.effect_tone)
    assert re.search(r"\btone-(positive|negative)\b", biased_cell.split('class="')[1].split('"')[0])
    fair_cell = planted_cell_anchor(page, fair)
    assert "violation" not in fair_cell.split('class="')[1].split('"')[0]
    # the summary heatmap names its cells' mean |r| and counts none of them; the hover has every number
    assert "mean |r| per domain × dimension cell" in page and "of 1 cells at |r|" not in page
    heatmaps = page[page.index("</section>", page.index('id="findings"')) :]  # after the findings' own figures
    title = re.search(
        r"<title>[^<]*first_language: english_l1 → non_english_l1 · corrective_tone[^<]*</title>", heatmaps
    )
    words = ("r = ", "95% CI", "n = ", "p_exact = ", "p_normal = ", "p_adjusted = ")
    assert title and all(word in title.group(0) for word in words)


def test_methods_box_states_every_parameter_and_the_judge(researcher_client, audit):
    page = researcher_client.get(
        reverse("audits:results", args=[audit.pk]) + "?n_boot=300&seed=7&threshold=0.2"
    ).content.decode()
    methods = page[page.index('id="methods-heading"') :]
    for text in (
        "pratt",
        "B = 300",
        "seed 7",
        "|r| &gt;= 0.2",
        "n &gt;= 15",
        "not validated",
        "judge_rubric/judge v1",
        "Benjamini",
    ):
        assert text in methods, text
    assert 'value="300"' in page  # the form keeps the chosen parameters


def test_summary_cell_lists_its_rows_and_links_to_pairs(researcher_client, audit):
    biased = max(audit.tutors.values_list("pk", flat=True))
    url = reverse("audits:results-cell", args=[audit.pk])
    page = researcher_client.get(
        url,
        {"tutor": biased, "domain": "mathematics", "kind": "explicit", "family": "within", "group": "first_language"},
    ).content.decode()
    assert page.count("first_language: english_l1 → non_english_l1") == 5  # one row per turn-level metric
    assert "violation" in page and "/pairs/?" in page


def test_pairs_page_shows_both_transcripts_side_by_side_with_judge_scores(researcher_client, audit):
    biased = max(audit.tutors.values_list("pk", flat=True))
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    href = unescape(re.search(r'href="([^"]+)"', planted_cell_anchor(page, biased)).group(1))
    pairs = researcher_client.get(href).content.decode()
    assert "Side by side" in pairs and "A: english_l1" in pairs and "B: non_english_l1" in pairs
    side_a, side_b = pairs.split('class="side side-a"')[1].split('class="side side-b"')
    assert "English is my first language" in side_a and "English is not my first language" in side_b
    assert "corrective_tone = " in side_a and "corrective_tone = " in side_b
    assert "violation" in pairs.split("Side by side")[0]
    # every question of the domain is listed with its two scores
    assert len(re.findall(r'<a href="[^"]*question=\d+#side-by-side">#\d+</a>', pairs)) == 20
    # choosing another question shows that one
    other = re.findall(r'<a href="([^"]*question=(\d+)#side-by-side)">', pairs)[-1]
    chosen = researcher_client.get(unescape(other[0])).content.decode()
    assert f"Side by side: question {other[1]}" in chosen


def test_results_pages_are_for_researchers_only(annotator_client, audit):
    url = reverse("audits:results", args=[audit.pk])
    assert annotator_client.get(url).status_code == 403
    assert Client().get(url).status_code == 302


def test_unknown_cells_are_404(researcher_client, audit):
    url = reverse("audits:results-pairs", args=[audit.pk])
    assert researcher_client.get(url, {"tutor": "x"}).status_code == 404
    assert researcher_client.get(url, {"tutor": 1, "domain": "nowhere", "metric": "corrective_tone"}).status_code == 404


def test_an_audit_without_finished_dialogues_has_an_empty_results_page(researcher_client):
    other = simulation_endpoint("empty audit models")
    audit = audit_create(
        name="empty audit",
        tutors=[other],
        student_endpoint=other,
        judge_endpoint=other,
        questions=make_questions(2),
        conditions=explicit_conditions(),
    )
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    assert "is <strong>draft</strong>" in page and "the 0 of 0 dialogues finished" in page
    api = researcher_client.get(f"/api/audits/{audit.pk}/results/").json()
    assert api["tables"]["contrasts"] == [] and api["methods"]["dialogue_scores"] == 0


def test_the_results_cell_pairs_and_transcript_pages_read_scores_from_their_audit_or_turns(researcher_client, audit):
    """Every audit's scores share one table and the default rubric: a read of some dialogues' scores that does not start
    from the audit (or the turns) walks the scores of every audit under that rubric. At paper scale the pairs page of a
    2,000-dialogue audit took twice as long once a 40,000-dialogue audit was in the database. On PostgreSQL each
    statement these pages send on the scores is planned on an index led by the audit or the turn."""
    if connection.vendor != "postgresql":
        service_missing("plans are read on PostgreSQL (DATABASE_URL)")
    biased = max(audit.tutors.values_list("pk", flat=True))
    page = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    pairs = unescape(re.search(r'href="([^"]+)"', planted_cell_anchor(page, biased)).group(1))
    dialogue = audit.dialogues.filter(status="done").first()
    scored_audit("a larger audit under the same rubric", questions=22)  # 440 dialogues beside this one's 80
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE audits_turnscore")  # as `planner_statistics` does when an audit finishes
    cell = {"tutor": biased, "domain": "mathematics", "kind": "explicit", "family": "within", "group": "first_language"}
    with CaptureQueriesContext(connection) as captured:
        assert researcher_client.get(reverse("audits:results", args=[audit.pk])).status_code == 200
        assert researcher_client.get(reverse("audits:results-cell", args=[audit.pk]), cell).status_code == 200
        assert researcher_client.get(pairs).status_code == 200
        assert researcher_client.get(reverse("audits:dialogue-detail", args=[dialogue.pk])).status_code == 200
    table = "audits_turnscore"
    statements = [q["sql"] for q in captured.captured_queries if f'"{table}"' in q["sql"]]
    assert len(statements) >= 2, "the pages sent no query on the scores"
    leading = leading_columns(table)
    for sql, plan in zip(statements, plans(statements), strict=True):
        scans = [(name, condition) for name, condition in index_scans(plan) if name in leading]
        assert scans and f"Seq Scan on {table}" not in plan, f"{sql}\n{plan}"
        for name, condition in scans:  # each scan is bounded by the audit or the turn, never a walk of the index
            assert leading[name] in ("audit_id", "turn_id") and f"{leading[name]} =" in condition, f"{sql}\n{plan}"
