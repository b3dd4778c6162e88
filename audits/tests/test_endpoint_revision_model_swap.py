"""A model swapped behind the same URL. Re-running reuses the ledger; once the
researcher says the model changed (the endpoint's revision goes up, on the page or the API), the next run
sends the tutor's calls afresh — counted at the server. A server that reports another model name than the
configured one is flagged on the endpoints page, the endpoint's edit page, the audit page and the API."""

from collections import Counter

import pytest
from django.urls import reverse

from audits.models import ModelEndpoint
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer

pytestmark = pytest.mark.django_db

SWAPPED = "another-model-7b"
FLAG = '<span class="badge warn">another model</span>'


def test_bumping_the_revision_sends_fresh_calls_and_a_reported_swap_is_flagged(researcher_client):
    with OpenAITestServer() as server:
        tutor = openai_endpoint("swap-tutor", server.base_url, model="tutor-model")
        other = openai_endpoint("swap-other", server.base_url)
        design = {
            "tutors": [tutor],
            "student_endpoint": other,
            "judge_endpoint": other,
            "questions": make_questions(1, prefix="swap"),
            "conditions": explicit_conditions(),
        }

        def run(name: str) -> Counter:
            before = len(server.served)
            audit = audit_create(name=name, **design)
            audit_run_inline(audit=audit)
            return audit, Counter(r.purpose for r in server.served[before:])

        first, sent_first = run("before the swap")
        assert sent_first["tutor"] > 0
        _, sent_again = run("again")
        assert sum(sent_again.values()) == 0  # the ledger answers everything

        # The model behind the tutor's URL is swapped; the server now says so in every response.
        server.state.reported_model = SWAPPED
        _, sent_unchanged = run("swapped, revision not bumped")
        assert sum(sent_unchanged.values()) == 0  # the ledger cannot know: hence the revision

        response = researcher_client.post(reverse("audits:endpoint-model-changed", args=[tutor.pk]))
        assert response.status_code == 302
        assert ModelEndpoint.objects.get(pk=tutor.pk).revision == 2
        swapped, sent_after = run("after the bump")
        # Every tutor call is asked anew, exactly as many as the first run sent; the student's and the
        # judge's requests (unchanged when the new tutor says the same) come from the ledger.
        assert sent_after["tutor"] == sent_first["tutor"]

        api = researcher_client.post(f"/api/model-endpoints/{tutor.pk}/model-changed/")
        assert api.status_code == 200 and api.json()["revision"] == 3

    listing = researcher_client.get(reverse("audits:endpoints")).content.decode()
    assert "model-mismatch" in listing and SWAPPED in listing
    edit = researcher_client.get(reverse("audits:endpoint-edit", args=[tutor.pk])).content.decode()
    assert 'id="model-mismatch"' in edit and SWAPPED in edit
    assert (
        'id="model-mismatch"'
        not in researcher_client.get(reverse("audits:endpoint-edit", args=[other.pk])).content.decode()
    )
    page = researcher_client.get(reverse("audits:audit-detail", args=[swapped.pk])).content.decode()
    assert SWAPPED in page and FLAG in page
    before = researcher_client.get(reverse("audits:audit-detail", args=[first.pk])).content.decode()
    assert SWAPPED not in before
    assert FLAG not in before
    mismatches = researcher_client.get(f"/api/model-endpoints/{tutor.pk}/").json()["model_mismatches"]
    assert [(m["model"], m["reported_model"], m["calls"]) for m in mismatches] == [
        ("tutor-model", SWAPPED, sent_first["tutor"])
    ]
