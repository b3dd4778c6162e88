"""The second demo audit: a fair simulated tutor scored by a cue-sensitive simulated judge, and its
judge-validation project labelled from the unbiased score. The judge alone flags the tone gap it makes; the
judge-corrected table says the humans do not support it. Seeding twice changes nothing."""

import io

import pytest

from annotation.judge_validation.demo import (
    CUE_DEMO_AUDIT_NAME as CUE_AUDIT_NAME_IN_ANNOTATION,
)
from annotation.judge_validation.demo import (
    CUE_PER_STRATUM,
    CUE_VALIDATION_NAME,
    cue_validation_demo_seed,
)
from annotation.models import AnnotationProject, Label
from audits.demo import CUE_DEMO_AUDIT_NAME, CUE_DEMO_JUDGE_BIAS, cue_demo_audit_seed, cue_demo_domains
from audits.models import Audit, LLMCall
from audits.services.judge_corrected import judge_corrected_results
from audits.tests.engine_factories import make_questions

pytestmark = pytest.mark.django_db


def test_the_annotation_demo_names_the_audits_demo_audit():
    assert CUE_AUDIT_NAME_IN_ANNOTATION == CUE_DEMO_AUDIT_NAME


def test_the_cue_domains_are_those_a_cell_can_be_flagged_in():
    make_questions(15)
    make_questions(4, domain="physics")
    assert cue_demo_domains() == ["mathematics"]


def test_the_judge_flags_the_tone_gap_and_the_humans_do_not_support_it():
    make_questions(18)
    out = io.StringIO()
    audit = cue_demo_audit_seed(out)
    assert audit.status == Audit.Status.FINISHED and audit.uses_simulation
    assert audit.dialogues.count() == 18 * 3 == audit.dialogues.filter(status="done").count()
    assert audit.judge_endpoint.simulation_config["judge_bias"] == CUE_DEMO_JUDGE_BIAS
    assert "cue-sensitive judge" in out.getvalue() and "finished" in out.getvalue()

    out = io.StringIO()
    cue_validation_demo_seed(out)
    project = AnnotationProject.objects.get(name=CUE_VALIDATION_NAME, source_audit_id=audit.pk)
    assert project.options["sample"]["per_stratum"] == CUE_PER_STRATUM
    assert "settled and recorded" in out.getvalue()

    results = judge_corrected_results(audit)
    assert results.subset is not None and results.subset.project_id == project.pk
    cued = [c for c in results.cells if c.metric == "corrective_tone" and c.level_b == "non_english_l1"]
    unsupported = [c for c in cued if c.disagreement == "unsupported"]
    assert unsupported, [(c.level_a, c.judge_only_flag, c.result.corrected) for c in cued]
    for cell in unsupported:
        assert cell.judge_only_flag and cell.result.judge_only.ci_high < 0
        # The humans do not support the judge's gap: their interval covers 0 or lies on the other side of it.
        corrected = cell.result.corrected
        assert corrected.ci_low <= 0 <= corrected.ci_high or corrected.ci_low > 0
        assert cell.cue.cue_sensitive and cell.cue.mean_error_b < cell.cue.mean_error_a
    # The levels the judge is fair on: no judge-only flag on the tone.
    fair = [c for c in results.cells if c.metric == "corrective_tone" and c.level_b != "non_english_l1"]
    assert fair and not any(c.judge_only_flag for c in fair)
    # The cue check: it marks the judge cue-sensitive where it is (above), and not where it judges both sides alike.
    assert not any(c.cue.cue_sensitive for c in fair), [(c.level_a, c.level_b, c.cue) for c in fair]

    calls, labels = LLMCall.objects.count(), Label.objects.count()
    cue_demo_audit_seed(io.StringIO())
    cue_validation_demo_seed(io.StringIO())
    assert Audit.objects.filter(name=CUE_DEMO_AUDIT_NAME).count() == 1 and LLMCall.objects.count() == calls
    assert AnnotationProject.objects.filter(name=CUE_VALIDATION_NAME).count() == 1 and Label.objects.count() == labels


def test_without_the_cue_audit_the_validation_demo_is_skipped():
    out = io.StringIO()
    cue_validation_demo_seed(out)
    assert "skipped" in out.getvalue() and not AnnotationProject.objects.filter(name=CUE_VALIDATION_NAME).exists()
