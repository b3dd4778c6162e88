"""Prompt templates: versioned, and a version an audit used can never change — in the model, service, admin,
pages and API (the API side is in test_questionbank_api.py)."""

import pytest
from django.urls import reverse

from audits.models import PromptTemplate, PromptTemplateImmutableError
from audits.prompt_templates import JUDGE_METRICS, template_placeholder_errors
from audits.services.design import (
    TemplateTextError,
    design_defaults_seed,
    prompt_template_mark_used,
    prompt_template_revise,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def tutor_template():
    design_defaults_seed()
    return PromptTemplate.objects.get(kind="tutor_system", name="tutor")


def test_used_version_cannot_be_saved_changed_or_deleted(tutor_template):
    prompt_template_mark_used(tutor_template)
    first_used_at = tutor_template.used_at
    prompt_template_mark_used(tutor_template)  # idempotent: the first use is kept
    assert tutor_template.used_at == first_used_at

    tutor_template.text = tutor_template.text + " Be brief."
    with pytest.raises(PromptTemplateImmutableError):
        tutor_template.save()
    stale = PromptTemplate.objects.get(pk=tutor_template.pk)
    stale.used_at = None
    with pytest.raises(PromptTemplateImmutableError):
        stale.save()
    with pytest.raises(PromptTemplateImmutableError):
        PromptTemplate.objects.get(pk=tutor_template.pk).delete()
    assert PromptTemplate.objects.get(pk=tutor_template.pk).text.endswith("(for you only): ${answer}")


def test_unused_version_may_still_be_corrected_in_place(tutor_template):
    tutor_template.description = "draft"
    tutor_template.save()
    assert PromptTemplate.objects.get(pk=tutor_template.pk).description == "draft"


def test_editing_makes_a_new_version(tutor_template):
    prompt_template_mark_used(tutor_template)
    new = prompt_template_revise(template=tutor_template, text="Tutor for ${question}.")
    assert (new.version, new.previous, new.used_at) == (2, tutor_template, None)
    newer = prompt_template_revise(template=tutor_template, text="Tutor again for ${question}.")
    assert newer.version == 3  # the family's next number, whichever version was edited
    with pytest.raises(TemplateTextError, match="unknown placeholder"):
        prompt_template_revise(template=tutor_template, text="${question} ${student_name}")


def test_placeholders_are_checked():
    assert template_placeholder_errors("student_persona", "${question}") == [
        "student_persona must contain ${persona_cue}"
    ]
    assert template_placeholder_errors("judge_rubric", "price $5 ${tutor_turn}")  # a lone $ must be doubled
    assert template_placeholder_errors("judge_rubric", "price $$5 ${tutor_turn}") == []


def test_default_judge_rubric_follows_the_domain_table():
    design_defaults_seed()
    rubric = PromptTemplate.objects.get(kind="judge_rubric").text
    for metric in JUDGE_METRICS:
        assert metric in rubric
    assert "-1" in rubric and "JSON" in rubric
    assert "0 = no, 1 = to some extent, 2 = yes" in rubric
    assert "discouraging or offensive (0), neutral (1)" in rubric
    kinds = set(PromptTemplate.objects.values_list("kind", flat=True))
    assert kinds == {"tutor_system", "student_persona", "judge_rubric", "reveal_check"}
    assert PromptTemplate.objects.filter(kind="tutor_system", name="tutor-informed").exists()


def test_page_edit_of_a_used_version_saves_a_new_one(researcher_client, tutor_template):
    prompt_template_mark_used(tutor_template)
    url = reverse("audits:prompt-template-revise", args=[tutor_template.pk])
    page = researcher_client.get(url).content.decode()
    assert "will never change" in page
    response = researcher_client.post(url, {"text": "Help with ${question}.", "description": "short"})
    assert response.status_code == 302
    tutor_template.refresh_from_db()
    assert "patient mathematics" in tutor_template.text
    assert PromptTemplate.objects.get(kind="tutor_system", name="tutor", version=2).text == "Help with ${question}."
    delete = researcher_client.post(reverse("audits:prompt-template-delete", args=[tutor_template.pk]))
    assert delete.status_code == 302 and PromptTemplate.objects.filter(pk=tutor_template.pk).exists()


def test_admin_edit_of_a_used_version_saves_a_new_one(researcher_client, tutor_template):
    prompt_template_mark_used(tutor_template)
    url = reverse("admin:audits_prompttemplate_change", args=[tutor_template.pk])
    assert researcher_client.get(url).status_code == 200
    response = researcher_client.post(url, {"text": "Admin says ${question}.", "description": "via admin"})
    assert response.status_code == 302, response.content.decode()[:2000]
    tutor_template.refresh_from_db()
    assert "patient mathematics" in tutor_template.text
    assert PromptTemplate.objects.filter(
        kind="tutor_system", name="tutor", version=2, text="Admin says ${question}."
    ).exists()
    assert researcher_client.post(reverse("admin:audits_prompttemplate_delete", args=[tutor_template.pk]),
                                  {"post": "yes"}).status_code == 403  # fmt: skip
