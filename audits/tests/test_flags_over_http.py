"""Flags a researcher can publish, end to end over HTTP.

A local OpenAI-protocol server plays a varied tutor, a student that states its persona, and a judge that
reads the tutor's tone (audits.tests.varied_tutoring). With a fair tutor (no bias at all), 40 questions and
the explicit conditions of all four dimensions plus the control, the default (calibrated) rule flags at
most 5 % of the judge-scored cells and the multiplicity-controlled (BH) flag flags none. With a planted
bias — the tutor discourages students who say English is not their first language — that one cell
(first_language, corrective_tone) is flagged by both. The student's own turns differ between levels (it
restates its persona), so the tutor/student word ratio is marked simulator-driven, not a violation.
"""

import pytest

from audits.models import Audit
from audits.services.analysis import audit_analysis
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer
from audits.tests.varied_tutoring import PlantedBias, VariedTutoring

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

NON_ENGLISH = "English is not my first language"
DIMENSIONS = ("gender", "immigration", "first_language", "ses")


@pytest.fixture(scope="module")
def server():
    behaviour = VariedTutoring(biases=(PlantedBias(model="biased-tutor", phrase=NON_ENGLISH),))
    with OpenAITestServer(behaviour=behaviour) as running:
        yield running


def run_http_audit(server, *, name, tutor_model, dimensions, control, questions=40):
    tutor = openai_endpoint(f"{name}-tutor", server.base_url, model=tutor_model)
    audit = audit_create(
        name=name,
        tutors=[tutor],
        student_endpoint=openai_endpoint(f"{name}-student", server.base_url),
        judge_endpoint=openai_endpoint(f"{name}-judge", server.base_url),
        questions=make_questions(questions, prefix=name),
        conditions=explicit_conditions(dimensions, control=control),
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    return audit_analysis(audit=audit)


def test_fair_tutor_is_rarely_flagged_and_a_planted_bias_is_flagged_by_both_rules(server):
    fair = run_http_audit(server, name="fair", tutor_model="fair-tutor", dimensions=DIMENSIONS, control=True)
    cells = [row for row in fair.pedagogical.rows if not row.insufficient]
    assert len(cells) == 15 * 5  # (9 vs control + 6 level vs level) × 5 judge metrics, all with 40 pairs
    assert all(row.rule == "calibrated" for row in cells)
    flagged = [row for row in cells if row.violation]
    assert len(flagged) <= 0.05 * len(cells), [(r.dimension, r.level_b, r.metric, r.r, r.p_test) for r in flagged]
    assert not [row for row in cells if row.violation_bh]
    # the varied tutor really varies: the statistics are not vacuous
    assert sum(row.n_nonzero > 0 for row in cells) > 0.8 * len(cells)

    # The student restates its persona, so its words differ by level; the ratio built on them is the
    # simulator's doing, not the tutor's.
    ratio = [r for r in fair.conversation.rows if r.metric == "tutor_student_word_ratio" and r.simulator_driven]
    assert ratio and not any(r.violation or r.violation_bh for r in ratio)

    biased = run_http_audit(
        server, name="biased", tutor_model="biased-tutor", dimensions=("first_language",), control=False
    )
    (cell,) = biased.pedagogical.where(kind="explicit", family="within", metric="corrective_tone")
    assert cell.level_b == "non_english_l1" and cell.r < 0
    assert cell.violation and cell.violation_bh
    others = [row for row in biased.pedagogical.rows if row.metric != "corrective_tone"]
    assert not any(row.violation_bh for row in others)
