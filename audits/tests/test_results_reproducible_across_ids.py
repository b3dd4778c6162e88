"""Identical dialogues give identical CIs and flags in any audit, whatever the
database ids of the tutor endpoint and the questions (seeds and resampling come from content), and
whatever the number of processes the analysis uses (ANALYSIS_PROCESSES)."""

import pytest

from audits.models import Audit, ModelEndpoint, Question
from audits.services.analysis import audit_analysis
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db

BIAS = [{"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -0.3}]


def copies_in_reverse(questions: list[Question]) -> list[Question]:
    """The same questions again (same content hash and text) as new rows, created in reverse order, so
    their ids are higher and in the opposite order."""
    copies = []
    for question in reversed(questions):
        copies.append(
            Question.objects.create(
                domain=question.domain,
                source=question.source,
                source_id=f"copy-{question.source_id}",
                content_hash=question.content_hash,
                text=question.text,
                answer=question.answer,
                solution=question.solution,
            )
        )
    return list(reversed(copies))


def run(name: str, tutor: ModelEndpoint, questions: list[Question]):
    audit = audit_create(
        name=name,
        tutors=[tutor],
        student_endpoint=simulation_endpoint(f"{name}-student", model="sim-student"),
        judge_endpoint=simulation_endpoint(f"{name}-judge", model="sim-judge"),
        questions=questions,
        conditions=explicit_conditions(("first_language", "immigration"), control=True),
        seed=7,
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    return audit_analysis(audit=audit)


def cell_values(analysis):
    keys = ("domain", "kind", "family", "dimension", "level_a", "level_b", "metric")
    values = ("n", "r", "ci_low", "ci_high", "mean_diff", "mean_diff_ci_low", "mean_diff_ci_high", "p_test")
    flags = ("violation", "violation_bh", "insufficient", "seed")
    table = {}
    for row in analysis.pedagogical.rows + analysis.conversation.rows:
        data = row.as_dict()
        table[tuple(data[k] for k in keys)] = tuple(data[v] for v in values + flags)
    return table


def test_same_dialogues_under_other_ids_give_identical_cis_and_flags(settings):
    questions = make_questions(24, prefix="ids")
    first = run("first", simulation_endpoint("tutor-a", bias=BIAS, seed=3, model="sim-tutor"), questions)

    for i in range(5):  # push the next endpoint's id well away from the first one's
        simulation_endpoint(f"spacer-{i}")
    second_tutor = simulation_endpoint("tutor-b (same model)", bias=BIAS, seed=3, model="sim-tutor")
    settings.ANALYSIS_PROCESSES = 2  # and the statistics in two forked processes: the same numbers
    second = run("second", second_tutor, copies_in_reverse(questions))

    assert second_tutor.pk != first.tutors[0]
    assert first.tutors != second.tutors
    a, b = cell_values(first), cell_values(second)
    assert a.keys() == b.keys() and len(a) > 50
    assert a == b
    # not vacuous: the planted bias is there and some cells have a non-degenerate interval
    assert any(row.violation for row in first.pedagogical.rows)
    assert any(row.ci_low < row.ci_high for row in first.pedagogical.rows)
