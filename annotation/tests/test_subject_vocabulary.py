"""One subject vocabulary: the project form's help names the preset's subjects, and imports and enrolments take
only the project's subjects, refusing an alias in words."""

import pytest
from django.urls import reverse

from annotation.forms import EnrollForm, ProjectForm
from annotation.models import Enrollment
from annotation.presets import SAFETUTORS, SAFETUTORS_SUBJECTS
from annotation.services.enrollment import enrollment_bulk_create, enrollment_create, enrollment_mark_replacement
from annotation.services.importers import ImportFailed, items_import
from annotation.services.projects import project_create
from annotation.services.training import SetupError
from annotation.subjects import subject_problem


@pytest.mark.pure
def test_a_subject_outside_the_project_is_refused_in_words():
    subjects = SAFETUTORS_SUBJECTS
    assert subject_problem("maths", subjects) == "'maths' is not a subject of this project; did you mean 'mathematics'?"
    assert subject_problem("Physics", subjects).endswith("did you mean 'physics'?")
    assert subject_problem("biology", subjects) == (
        "'biology' is not a subject of this project; its subjects are mathematics, physics, chemistry."
    )
    assert subject_problem("chemistry", subjects) == subject_problem("", subjects) == ""
    assert subject_problem("anything", ()) == ""  # a project declaring no subjects takes any


@pytest.mark.pure
def test_the_project_form_names_the_preset_subjects():
    help_text = ProjectForm().fields["subjects"].help_text
    assert ", ".join(SAFETUTORS_SUBJECTS) in help_text and "maths" not in help_text


@pytest.mark.django_db
def test_imports_and_enrolments_take_only_the_project_subjects(make_user):
    project = project_create(name="Subjects", preset=SAFETUTORS)
    with pytest.raises(ImportFailed) as failure:
        items_import(project=project, content='{"id": "a", "text": "t", "subject": "maths"}\n', fmt="jsonl")
    assert failure.value.sentences()[0] == (
        "Line 1, subject: 'maths' is not a subject of this project; did you mean 'mathematics'?"
    )

    stage = project.stages.get(order=1)
    annotator = make_user("annotator")
    with pytest.raises(SetupError, match="did you mean 'mathematics'"):
        enrollment_create(stage=stage, user=annotator, subject="maths")
    with pytest.raises(SetupError, match="not a subject of this project"):
        enrollment_bulk_create(stage=stage, usernames=[annotator.username], subject="maths")
    assert enrollment_create(stage=stage, user=annotator, subject="mathematics").subject == "mathematics"

    form = EnrollForm(stage=stage)
    assert [value for value, _ in form.fields["subject"].choices] == ["", *SAFETUTORS_SUBJECTS]

    # An enrolment stored before the rule keeps its subject when its recruit is replaced.
    legacy = Enrollment.objects.create(stage=stage, user=make_user("annotator"), subject="maths", status="failed")
    replaced = enrollment_mark_replacement(enrollment=legacy, replacement_user=make_user("annotator"))
    assert replaced.replaced_by.subject == "maths"


@pytest.mark.django_db
def test_the_stage_page_enrolment_refuses_a_free_text_subject(researcher_client, make_user):
    project = project_create(name="Subjects page", preset=SAFETUTORS)
    stage = project.stages.get(order=1)
    annotator = make_user("annotator")
    page = researcher_client.post(
        reverse("annotation:stage-action", args=[stage.pk, "enroll"]), {"user": annotator.pk, "subject": "maths"}
    )
    assert page.status_code == 400 and not stage.enrollments.exists()
