"""Every page and API endpoint, called by every role, answers with the status the table below expects.

The table is explicit on purpose: a reviewer reads it as the access policy. The test is generated from
the URL conf and fails when a URL pattern has no row, so a new page cannot ship without a decision on
who may open it. Django's admin is covered by one row per registered model (its URL patterns come from
the admin itself).

Roles: anonymous; `annotator` (the demo annotator, enrolled in the demo projects); `outsider` (an
annotator enrolled in no project); `adjudicator`; `researcher`; `operator` (users, tokens and the system, none of
the research). Every call is a GET: POST-only views
answer 405 to a role allowed to use them, and 403 (or a login redirect) to others — the permission check
comes before the method check. Write behaviour is covered by each feature's own tests.

To print the observed table after adding pages: `PERMISSION_MATRIX_PRINT=1 make test PYTEST_ARGS="-k matrix -s"`.
"""

import html
import os
import re

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.test import Client

from edufair_web.tests.url_routes import base_pattern, url_patterns

# Results pages and exports answer with the results (not the progress state): analyses computed at once.
pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.usefixtures("analysis_inline")]

ROLES = ("anonymous", "annotator", "outsider", "adjudicator", "researcher", "operator")

# Status per role, in the order of ROLES. L = redirect to the login page (302).
L = 302
PAGE_RESEARCHER = (L, 403, 403, 403, 200, 403)
PAGE_RESEARCHER_POST = (L, 403, 403, 403, 405, 403)
# Any research role (operators take no part in the research).
PAGE_ANY = (L, 200, 200, 200, 200, 403)
# The state of the installation: researchers and operators.
PAGE_SYSTEM = (L, 403, 403, 403, 200, 200)
API_RESEARCHER = (401, 403, 403, 403, 200, 403)
API_RESEARCHER_POST = (401, 403, 403, 403, 405, 403)
API_READ_ANY = (401, 200, 200, 200, 200, 403)
API_POST_ANY = (401, 405, 405, 405, 405, 403)
# Anyone signed in, operators too: the home page, who am I, one's own API tokens.
PAGE_SIGNED_IN = (L, 200, 200, 200, 200, 200)
API_SIGNED_IN = (401, 200, 200, 200, 200, 200)
API_SIGNED_IN_POST = (401, 405, 405, 405, 405, 405)
# Moderation and adjudication: adjudicators and researchers.
PAGE_ADJUDICATOR = (L, 403, 403, 200, 200, 403)
PAGE_ADJUDICATOR_POST = (L, 403, 403, 405, 405, 403)
API_ADJUDICATOR = (401, 403, 403, 200, 200, 403)
API_ADJUDICATOR_POST = (401, 403, 403, 405, 405, 403)
# An annotator's own training and labelling: only the enrolled demo annotator. Researchers and adjudicators
# are not enrolled in the stage, so they are refused too (they see it through the project pages).
PAGE_ENROLLED = (L, 200, 403, 403, 403, 403)
API_ENROLLED = (401, 200, 403, 403, 403, 403)
# A training step after the demo annotator's current one: the server refuses it (order is enforced).
PAGE_NOT_YET = (L, 403, 403, 403, 403, 403)
API_NOT_YET = (401, 403, 403, 403, 403, 403)

# pattern (as the URL resolver spells it) → (concrete path, expected statuses)
EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {}


def expect(pattern: str, path: str, statuses: tuple[int, ...]) -> None:
    assert pattern not in EXPECTED, f"two rows for {pattern}"
    EXPECTED[pattern] = (path, statuses)


# --- project shell -------------------------------------------------------------------------------
expect("", "/", PAGE_SIGNED_IN)
expect("healthz", "/healthz", (200, 200, 200, 200, 200, 200))  # details for researchers and operators only
expect("favicon.ico", "/favicon.ico", (302, 302, 302, 302, 302, 302))  # to the static icon, for anyone
expect("system/", "/system/", PAGE_SYSTEM)
expect("accounts/login/", "/accounts/login/", (200, L, L, L, L, L))  # signed-in users go home
expect("accounts/logout/", "/accounts/logout/", (405, 405, 405, 405, 405, 405))  # log out is POST only
expect("api/me/", "/api/me/", API_SIGNED_IN)
expect("api/auth/token/", "/api/auth/token/", (405, 405, 405, 405, 405, 405))
expect("api/auth/tokens/", "/api/auth/tokens/", API_SIGNED_IN)  # one's own tokens
expect("api/auth/tokens/<str:token_key>/", "/api/auth/tokens/abc/", API_SIGNED_IN_POST)  # DELETE only
expect("api/schema/", "/api/schema/", API_RESEARCHER)
expect("api/docs/", "/api/docs/", API_RESEARCHER)
expect("api/", "/api/", API_SIGNED_IN)
expect("api/<drf_format_suffix:format>", "/api/.json", API_SIGNED_IN)
expect("api/^workers/$", "/api/workers/", API_RESEARCHER)
expect("api/^workers/(?P<hostname>[^/.]+)/$", "/api/workers/{worker}/", API_RESEARCHER)

# --- audits: question bank and design ------------------------------------------------------------
expect("audits/questionbank/", "/audits/questionbank/", PAGE_RESEARCHER)
expect("audits/questionbank/imports/new/", "/audits/questionbank/imports/new/", PAGE_RESEARCHER)
expect("audits/questionbank/imports/<id:pk>/", "/audits/questionbank/imports/{question_import}/", PAGE_RESEARCHER)
expect(
    "audits/questionbank/imports/<id:pk>/status/",
    "/audits/questionbank/imports/{question_import}/status/",
    PAGE_RESEARCHER,
)
expect("audits/questionbank/questions/<id:pk>/", "/audits/questionbank/questions/{question}/", PAGE_RESEARCHER)
expect("audits/design/", "/audits/design/", PAGE_RESEARCHER)
expect("audits/design/preview/", "/audits/design/preview/", PAGE_RESEARCHER)
expect("audits/design/dimensions/new/", "/audits/design/dimensions/new/", PAGE_RESEARCHER)
expect("audits/design/dimensions/<id:pk>/edit/", "/audits/design/dimensions/{dimension}/edit/", PAGE_RESEARCHER)
expect("audits/design/levels/new/", "/audits/design/levels/new/", PAGE_RESEARCHER)
expect("audits/design/levels/<id:pk>/edit/", "/audits/design/levels/{level}/edit/", PAGE_RESEARCHER)
expect("audits/design/names/new/", "/audits/design/names/new/", PAGE_RESEARCHER)
expect("audits/design/names/<id:pk>/edit/", "/audits/design/names/{name_cue}/edit/", PAGE_RESEARCHER)
expect("audits/design/names/<id:pk>/delete/", "/audits/design/names/{name_cue}/delete/", PAGE_RESEARCHER)
expect("audits/design/templates/new/", "/audits/design/templates/new/", PAGE_RESEARCHER)
expect("audits/design/templates/<id:pk>/", "/audits/design/templates/{template}/", PAGE_RESEARCHER)
expect("audits/design/templates/<id:pk>/revise/", "/audits/design/templates/{template}/revise/", PAGE_RESEARCHER)
expect("audits/design/templates/<id:pk>/delete/", "/audits/design/templates/{template}/delete/", PAGE_RESEARCHER)

# --- audits: endpoints, runs, results ------------------------------------------------------------
expect("audits/endpoints/", "/audits/endpoints/", PAGE_RESEARCHER)
expect("audits/endpoints/new/", "/audits/endpoints/new/", PAGE_RESEARCHER)
expect("audits/endpoints/<id:pk>/edit/", "/audits/endpoints/{endpoint}/edit/", PAGE_RESEARCHER)
expect("audits/endpoints/<id:pk>/test/", "/audits/endpoints/{endpoint}/test/", PAGE_RESEARCHER_POST)
expect("audits/endpoints/<id:pk>/model-changed/", "/audits/endpoints/{endpoint}/model-changed/", PAGE_RESEARCHER_POST)
expect("audits/runs/", "/audits/runs/", PAGE_RESEARCHER)
expect("audits/runs/new/", "/audits/runs/new/", PAGE_RESEARCHER)
expect("audits/runs/new/preview/", "/audits/runs/new/preview/", PAGE_RESEARCHER_POST)
expect("audits/runs/<id:pk>/", "/audits/runs/{audit}/", PAGE_RESEARCHER)
expect("audits/runs/<id:pk>/progress/", "/audits/runs/{audit}/progress/", PAGE_RESEARCHER)
expect("audits/runs/<id:pk>/clone/", "/audits/runs/{audit}/clone/", PAGE_RESEARCHER_POST)
expect("audits/runs/<id:pk>/<slug:action>/", "/audits/runs/{audit}/pause/", PAGE_RESEARCHER_POST)
expect("audits/dialogues/<id:pk>/", "/audits/dialogues/{dialogue}/", PAGE_RESEARCHER)
expect("audits/", "/audits/", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/", "/audits/results/{audit}/", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/cell/", "{results_cell}", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/pairs/", "{results_pairs}", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/export/", "/audits/results/{audit}/export/?format=json", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/report/", "/audits/results/{audit}/report/", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/status/", "/audits/results/{audit}/status/", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/retry/", "/audits/results/{audit}/retry/", PAGE_RESEARCHER_POST)
expect("audits/results/compare/", "/audits/results/compare/", PAGE_RESEARCHER)
expect("audits/results/<id:pk>/judge-corrected/", "/audits/results/{audit}/judge-corrected/", PAGE_RESEARCHER)
expect(
    "audits/results/<id:pk>/judge-corrected/export/",
    "/audits/results/{audit}/judge-corrected/export/?format=json",
    PAGE_RESEARCHER,
)

# --- audits API ----------------------------------------------------------------------------------
expect("api/audits/<id:pk>/results/", "/api/audits/{audit}/results/", API_RESEARCHER)
expect("api/audits/<id:pk>/export/", "/api/audits/{audit}/export/?format=json", API_RESEARCHER)
expect("api/audits/<id:pk>/results/judge-corrected/", "/api/audits/{audit}/results/judge-corrected/", API_RESEARCHER)
expect("api/^model-endpoints/$", "/api/model-endpoints/", API_RESEARCHER)
expect("api/^model-endpoints/(?P<pk>[^/.]+)/$", "/api/model-endpoints/{endpoint}/", API_RESEARCHER)
expect(
    "api/^model-endpoints/(?P<pk>[^/.]+)/test-connection/$",
    "/api/model-endpoints/{endpoint}/test-connection/",
    API_RESEARCHER_POST,
)
expect(
    "api/^model-endpoints/(?P<pk>[^/.]+)/model-changed/$",
    "/api/model-endpoints/{endpoint}/model-changed/",
    API_RESEARCHER_POST,
)
expect("api/^model-endpoints/calibration-tutor/$", "/api/model-endpoints/calibration-tutor/", API_RESEARCHER_POST)
expect("api/^audits/$", "/api/audits/", API_RESEARCHER)
expect("api/^audits/(?P<pk>[^/.]+)/$", "/api/audits/{audit}/", API_RESEARCHER)
for action in ("cancel", "clone", "launch", "pause", "rejudge", "resume", "retry-failed"):
    expect(f"api/^audits/(?P<pk>[^/.]+)/{action}/$", f"/api/audits/{{audit}}/{action}/", API_RESEARCHER_POST)
expect("api/^audits/(?P<pk>[^/.]+)/progress/$", "/api/audits/{audit}/progress/", API_RESEARCHER)
expect("api/^dialogues/$", "/api/dialogues/", API_RESEARCHER)
expect("api/^dialogues/(?P<pk>[^/.]+)/$", "/api/dialogues/{dialogue}/", API_RESEARCHER)
expect("api/^judge-runs/$", "/api/judge-runs/", API_RESEARCHER)
expect("api/^judge-runs/(?P<pk>[0-9]+)/$", "/api/judge-runs/{judge_run}/", API_RESEARCHER)
expect("api/^judge-runs/(?P<pk>[0-9]+)/cancel/$", "/api/judge-runs/{judge_run}/cancel/", API_RESEARCHER_POST)
# The question bank, the demographic design, prompt templates and imports: researchers only, as their pages.
expect("api/^questions/$", "/api/questions/", API_RESEARCHER)
expect("api/^questions/(?P<pk>[^/.]+)/$", "/api/questions/{question}/", API_RESEARCHER)
expect("api/^question-imports/$", "/api/question-imports/", API_RESEARCHER)
expect("api/^question-imports/(?P<pk>[^/.]+)/$", "/api/question-imports/{question_import}/", API_RESEARCHER)
expect("api/^demographic-dimensions/$", "/api/demographic-dimensions/", API_RESEARCHER)
expect("api/^demographic-dimensions/(?P<pk>[^/.]+)/$", "/api/demographic-dimensions/{dimension}/", API_RESEARCHER)
expect("api/^demographic-levels/$", "/api/demographic-levels/", API_RESEARCHER)
expect("api/^demographic-levels/(?P<pk>[^/.]+)/$", "/api/demographic-levels/{level}/", API_RESEARCHER)
expect("api/^name-cues/$", "/api/name-cues/", API_RESEARCHER)
expect("api/^name-cues/(?P<pk>[^/.]+)/$", "/api/name-cues/{name_cue}/", API_RESEARCHER)
expect("api/^prompt-templates/$", "/api/prompt-templates/", API_RESEARCHER)
expect("api/^prompt-templates/(?P<pk>[^/.]+)/$", "/api/prompt-templates/{template}/", API_RESEARCHER)
# POST only: researchers get 405 for the GET, everyone else 403.
expect("api/^prompt-templates/(?P<pk>[^/.]+)/revise/$", "/api/prompt-templates/{template}/revise/", API_RESEARCHER_POST)

# --- annotation: projects, stages, reports (researchers) ----------------------------------------------
expect("annotation/", "/annotation/", (L, 302, 302, 302, 302, 302))  # to the signed-in user's training list
expect("annotation/projects/", "/annotation/projects/", PAGE_RESEARCHER)
expect("annotation/projects/new/", "/annotation/projects/new/", PAGE_RESEARCHER)
expect("annotation/projects/<id:pk>/", "/annotation/projects/{project}/", PAGE_RESEARCHER)
expect("annotation/projects/<id:pk>/import/", "/annotation/projects/{project}/import/", PAGE_RESEARCHER_POST)
expect(
    "annotation/projects/<id:pk>/pass-rates.<str:fmt>",
    "/annotation/projects/{project}/pass-rates.csv",
    PAGE_RESEARCHER,
)
expect("annotation/projects/<id:pk>/report/", "/annotation/projects/{project}/report/", PAGE_RESEARCHER)
expect("annotation/projects/<id:pk>/report.<str:fmt>", "/annotation/projects/{project}/report.md", PAGE_RESEARCHER)
expect("annotation/projects/<id:pk>/labels.<str:fmt>", "/annotation/projects/{project}/labels.csv", PAGE_RESEARCHER)
expect(
    "annotation/projects/<id:pk>/label-studio-import/",
    "/annotation/projects/{project}/label-studio-import/",
    PAGE_RESEARCHER,
)
expect("annotation/projects/<id:pk>/conflicts/", "/annotation/projects/{project}/conflicts/", PAGE_RESEARCHER)
expect("annotation/stages/<id:pk>/", "/annotation/stages/{stage}/", PAGE_RESEARCHER)
expect("annotation/stages/<id:pk>/<str:action>/", "/annotation/stages/{stage}/guideline/", PAGE_RESEARCHER_POST)
expect("annotation/enrollments/<id:pk>/replace/", "/annotation/enrollments/{enrollment}/replace/", PAGE_RESEARCHER_POST)

# --- annotation: people and crowd entry links ---------------------------------------------------------
# People: researchers (annotators and adjudicators) and operators (every role); enrolment and crowd links are
# research (researchers only). The invitation page is for anyone holding a link (a bad one shows "not valid").
PEOPLE_PAGE = (L, 403, 403, 403, 200, 200)
PEOPLE_PAGE_POST = (L, 403, 403, 403, 405, 405)
PEOPLE_API = (401, 403, 403, 403, 200, 200)
PEOPLE_API_POST = (401, 403, 403, 403, 405, 405)
expect("annotation/people/", "/annotation/people/", PEOPLE_PAGE)
expect("annotation/people/<id:pk>/invite/", "/annotation/people/{person}/invite/", PEOPLE_PAGE_POST)
expect("annotation/people/<id:pk>/deactivate/", "/annotation/people/{person}/deactivate/", PEOPLE_PAGE_POST)
expect(
    "annotation/people/welcome/<str:uidb64>/<str:token>/",
    "/annotation/people/welcome/MQ/not-a-token/",
    (200, 200, 200, 200, 200, 200),
)
expect("annotation/people/stages/<id:stage_pk>/", "/annotation/people/stages/{stage}/", PAGE_RESEARCHER)
expect(
    "annotation/people/stages/<id:stage_pk>/crowd/", "/annotation/people/stages/{stage}/crowd/", PAGE_RESEARCHER_POST
)
expect(
    "annotation/people/stages/<id:stage_pk>/crowd.csv", "/annotation/people/stages/{stage}/crowd.csv", PAGE_RESEARCHER
)
expect(
    "annotation/people/enrollments/<id:pk>/replace/",
    "/annotation/people/enrollments/{enrollment}/replace/",
    PAGE_RESEARCHER_POST,
)
# The entry link is public (a platform sends participants there); an unknown key is a 404 for everyone, and the
# completion page belongs to a session opened through a link (403 for everyone else).
expect("annotation/crowd/<slug:key>/", "/annotation/crowd/no-such-link/", (404, 404, 404, 404, 404, 404))
expect("annotation/crowd/<slug:key>/done/", "/annotation/crowd/no-such-link/done/", (403, 403, 403, 403, 403, 403))
# Returning the study belongs to a session opened through a link too: nothing to return for everyone else.
expect("annotation/crowd/return/", "/annotation/crowd/return/", (404, 404, 404, 404, 404, 404))
# "I do not consent / leave": POST only, by the recruit of that link's session (405 to a GET from anyone).
expect("annotation/crowd/<slug:key>/leave/", "/annotation/crowd/no-such-link/leave/", (405, 405, 405, 405, 405, 405))
expect("api/annotation/people/", "/api/annotation/people/", PEOPLE_API)
expect("api/annotation/people/<id:user_pk>/invite/", "/api/annotation/people/{person}/invite/", PEOPLE_API_POST)
expect("api/annotation/people/<id:user_pk>/deactivate/", "/api/annotation/people/{person}/deactivate/", PEOPLE_API_POST)
# Setting one's password through an invitation: the link is the credential (POST only, for anyone holding it).
expect(
    "api/annotation/people/welcome/<str:uidb64>/<str:token>/",
    "/api/annotation/people/welcome/MQ/not-a-token/",
    (405, 405, 405, 405, 405, 405),
)
expect(
    "api/annotation/people/stages/<id:stage_pk>/enrol/",
    "/api/annotation/people/stages/{stage}/enrol/",
    API_RESEARCHER_POST,
)
expect(
    "api/annotation/people/enrollments/<id:enrollment_pk>/replace/",
    "/api/annotation/people/enrollments/{enrollment}/replace/",
    API_RESEARCHER_POST,
)
# The demo stage has no crowd link: 404 for the researcher, who may open one with PUT.
expect(
    "api/annotation/people/stages/<id:stage_pk>/crowd/",
    "/api/annotation/people/stages/{stage}/crowd/",
    (401, 403, 403, 403, 404, 403),
)
expect(
    "api/annotation/people/stages/<id:stage_pk>/crowd/recruits/",
    "/api/annotation/people/stages/{stage}/crowd/recruits/",
    API_RESEARCHER,
)
expect(
    "api/annotation/people/stages/<id:stage_pk>/crowd/export/",
    "/api/annotation/people/stages/{stage}/crowd/export/",
    API_RESEARCHER,
)
expect(
    "api/annotation/people/stages/<id:stage_pk>/crowd/outcomes/",
    "/api/annotation/people/stages/{stage}/crowd/outcomes/",
    API_RESEARCHER,
)

# --- annotation: training, norming, labelling, adjudication ------------------------------------------
# The demo annotator is enrolled in stage 1 but has not confirmed the guideline yet.
expect("annotation/training/", "/annotation/training/", PAGE_ANY)
expect("annotation/training/<id:stage_pk>/", "/annotation/training/{stage}/", PAGE_ENROLLED)
expect("annotation/training/<id:stage_pk>/guideline/", "/annotation/training/{stage}/guideline/", PAGE_ENROLLED)
for step in ("examples", "pilot", "feedback", "norming", "qualification"):
    expect(f"annotation/training/<id:stage_pk>/{step}/", f"/annotation/training/{{stage}}/{step}/", PAGE_NOT_YET)
# A norming thread: 403 to the demo annotator (their pilot is not in yet), 404 to an annotator of another
# stage (thread ids are sequential: a thread one may not see answers as if it did not exist).
expect("annotation/threads/<id:pk>/", "/annotation/threads/{thread}/", (L, 403, 404, 200, 200, 403))
expect("annotation/comments/<id:pk>/pin/", "/annotation/comments/{comment}/pin/", PAGE_ADJUDICATOR_POST)
expect("annotation/moderation/", "/annotation/moderation/", PAGE_ADJUDICATOR)
expect("annotation/label/", "/annotation/label/", PAGE_ANY)
expect("annotation/label/<id:stage_pk>/", "/annotation/label/{jv_stage}/", PAGE_ENROLLED)
expect(
    "annotation/label/<id:stage_pk>/items/<id:item_pk>/discussion/",
    "/annotation/label/{jv_stage}/items/{jv_item}/discussion/",
    (L, 404, 404, 200, 200, 403),  # the demo annotator is not in this item's discussion: as if there were none
)
expect(
    "annotation/label/<id:stage_pk>/items/<id:item_pk>/revise/",
    "/annotation/label/{jv_stage}/items/{jv_item}/revise/",
    (L, 404, 404, 404, 404, 403),  # only an item one submitted oneself can be reopened
)
expect("annotation/dashboard/<id:stage_pk>/", "/annotation/dashboard/{jv_stage}/", PAGE_RESEARCHER)
expect("annotation/dashboard/<id:stage_pk>/live/", "/annotation/dashboard/{jv_stage}/live/", PAGE_RESEARCHER)
expect("annotation/adjudicate/", "/annotation/adjudicate/", PAGE_ADJUDICATOR)
expect(
    "annotation/adjudicate/<id:stage_pk>/<id:item_pk>/",
    "/annotation/adjudicate/{jv_stage}/{jv_item}/",
    PAGE_ADJUDICATOR,
)

# --- annotation: judge validation (researchers) -----------------------------------------------------------
expect("annotation/judge-validation/", "/annotation/judge-validation/", PAGE_RESEARCHER)
expect("annotation/judge-validation/new/", "/annotation/judge-validation/new/", PAGE_RESEARCHER)
expect("annotation/judge-validation/<id:pk>/", "/annotation/judge-validation/{jv_project}/", PAGE_RESEARCHER)
expect(
    "annotation/judge-validation/<id:pk>/workshop/",
    "/annotation/judge-validation/{jv_project}/workshop/",
    PAGE_RESEARCHER,
)
expect(
    "annotation/judge-validation/<id:pk>/<slug:action>/",
    "/annotation/judge-validation/{jv_project}/thresholds/",
    PAGE_RESEARCHER_POST,
)

# --- annotation API ---------------------------------------------------------------------------------------
# Project building blocks (gold labels included) are for researchers.
for collection, key in (
    ("projects", "project"),
    ("questions", "label_question"),
    ("items", "item"),
    ("gold-labels", "gold_label"),
    ("stages", "stage"),
    ("guidelines", "guideline"),
    ("worked-examples", "worked_example"),
):
    expect(f"api/^annotation/{collection}/$", f"/api/annotation/{collection}/", API_RESEARCHER)
    expect(f"api/^annotation/{collection}/(?P<pk>[^/.]+)/$", f"/api/annotation/{collection}/{{{key}}}/", API_RESEARCHER)
# Enrolments: everyone lists their own; another person's enrolment is not found (researchers see all).
expect("api/^annotation/enrollments/$", "/api/annotation/enrollments/", API_READ_ANY)
expect(
    "api/^annotation/enrollments/(?P<pk>[^/.]+)/$",
    "/api/annotation/enrollments/{enrollment}/",
    (401, 200, 404, 404, 200, 403),
)
expect(
    "api/^annotation/enrollments/(?P<pk>[^/.]+)/replace/$",
    "/api/annotation/enrollments/{enrollment}/replace/",
    API_RESEARCHER_POST,
)
for action in ("apply-preset", "import-items"):
    expect(
        f"api/^annotation/projects/(?P<pk>[^/.]+)/{action}/$",
        f"/api/annotation/projects/{{project}}/{action}/",
        API_RESEARCHER_POST,
    )
expect(
    "api/^annotation/projects/(?P<pk>[^/.]+)/pass-rates/$",
    "/api/annotation/projects/{project}/pass-rates/",
    API_RESEARCHER,
)
expect(
    "api/^annotation/stages/(?P<pk>[^/.]+)/choose-training-set/$",
    "/api/annotation/stages/{stage}/choose-training-set/",
    API_RESEARCHER_POST,
)
expect(
    "api/^annotation/stages/(?P<pk>[^/.]+)/add-items/$",
    "/api/annotation/stages/{stage}/add-items/",
    API_RESEARCHER_POST,
)
expect(
    "api/^annotation/stages/(?P<pk>[^/.]+)/training-items/$",
    "/api/annotation/stages/{stage}/training-items/",
    API_RESEARCHER,
)
expect("api/annotation/training/<id:stage_pk>/", "/api/annotation/training/{stage}/", API_ENROLLED)
expect("api/annotation/training/<id:stage_pk>/guideline/", "/api/annotation/training/{stage}/guideline/", API_ENROLLED)
expect("api/annotation/training/<id:stage_pk>/examples/", "/api/annotation/training/{stage}/examples/", API_NOT_YET)
expect(
    "api/annotation/training/<id:stage_pk>/examples/<id:example_pk>/seen/",
    "/api/annotation/training/{stage}/examples/{worked_example}/seen/",
    API_POST_ANY,
)
expect(
    "api/annotation/training/<id:stage_pk>/<str:phase>/next/",
    "/api/annotation/training/{stage}/pilot/next/",
    API_NOT_YET,
)
expect("api/annotation/training/<id:stage_pk>/feedback/", "/api/annotation/training/{stage}/feedback/", API_NOT_YET)
expect("api/annotation/training/<id:stage_pk>/norming/", "/api/annotation/training/{stage}/norming/", API_NOT_YET)
expect("api/annotation/stages/<id:stage_pk>/labels/", "/api/annotation/stages/{stage}/labels/", API_POST_ANY)
expect(
    "api/annotation/threads/<id:thread_pk>/comments/",
    "/api/annotation/threads/{thread}/comments/",
    (401, 403, 404, 200, 200, 403),  # as the thread page
)
expect("api/annotation/comments/<id:comment_pk>/pin/", "/api/annotation/comments/{comment}/pin/", API_ADJUDICATOR_POST)
expect("api/annotation/main/<id:stage_pk>/next/", "/api/annotation/main/{jv_stage}/next/", API_ENROLLED)
expect("api/annotation/main/<id:stage_pk>/submit/", "/api/annotation/main/{jv_stage}/submit/", API_POST_ANY)
expect("api/annotation/main/<id:stage_pk>/settings/", "/api/annotation/main/{jv_stage}/settings/", API_RESEARCHER)
expect(
    "api/annotation/main/<id:stage_pk>/items/<id:item_pk>/discussion/",
    "/api/annotation/main/{jv_stage}/items/{jv_item}/discussion/",
    (401, 404, 404, 200, 200, 403),  # as the discussion page
)
expect(
    "api/annotation/main/<id:stage_pk>/items/<id:item_pk>/discussion/close/",
    "/api/annotation/main/{jv_stage}/items/{jv_item}/discussion/close/",
    API_ADJUDICATOR_POST,
)
expect("api/annotation/main/<id:stage_pk>/recent/", "/api/annotation/main/{jv_stage}/recent/", API_ENROLLED)
expect(
    "api/annotation/main/<id:stage_pk>/items/<id:item_pk>/revise/",
    "/api/annotation/main/{jv_stage}/items/{jv_item}/revise/",
    API_POST_ANY,
)
expect("api/annotation/main/disputed/", "/api/annotation/main/disputed/", API_READ_ANY)
expect("api/annotation/main/<id:stage_pk>/dashboard/", "/api/annotation/main/{jv_stage}/dashboard/", API_RESEARCHER)
expect("api/annotation/main/<id:stage_pk>/aggregation/", "/api/annotation/main/{jv_stage}/aggregation/", API_RESEARCHER)
expect("api/annotation/adjudication/", "/api/annotation/adjudication/", API_ADJUDICATOR)
expect("api/annotation/adjudication/threads/", "/api/annotation/adjudication/threads/", API_ADJUDICATOR)
expect(
    "api/annotation/adjudication/<id:stage_pk>/<id:item_pk>/",
    "/api/annotation/adjudication/{jv_stage}/{jv_item}/",
    API_ADJUDICATOR,
)
expect(
    "api/annotation/projects/<id:project_pk>/conflicts/",
    "/api/annotation/projects/{project}/conflicts/",
    API_RESEARCHER,
)
expect(
    "api/annotation/conflicts/<id:conflict_pk>/disposition/",
    "/api/annotation/conflicts/1/disposition/",
    API_RESEARCHER_POST,
)
expect("api/annotation/projects/<id:project_pk>/report/", "/api/annotation/projects/{project}/report/", API_RESEARCHER)
expect("api/annotation/projects/<id:project_pk>/labels/", "/api/annotation/projects/{project}/labels/", API_RESEARCHER)
expect(
    "api/annotation/projects/<id:project_pk>/label-studio-import/",
    "/api/annotation/projects/{project}/label-studio-import/",
    API_RESEARCHER_POST,
)
expect("api/annotation/judge-validation/", "/api/annotation/judge-validation/", API_RESEARCHER_POST)
expect("api/annotation/judge-validation/mrbench/", "/api/annotation/judge-validation/mrbench/", API_RESEARCHER_POST)
expect(
    "api/annotation/judge-validation/audits/<id:audit_pk>/status/",
    "/api/annotation/judge-validation/audits/{audit}/status/",
    API_RESEARCHER,
)
expect(
    "api/annotation/judge-validation/<id:project_pk>/report/",
    "/api/annotation/judge-validation/{jv_project}/report/",
    API_RESEARCHER,
)
# GET judges/: every judge with the progress of its run (researchers); POST adds or re-runs one.
expect(
    "api/annotation/judge-validation/<id:project_pk>/judges/",
    "/api/annotation/judge-validation/{jv_project}/judges/",
    API_RESEARCHER,
)
for suffix in ("workshops", "persona"):
    expect(
        f"api/annotation/judge-validation/<id:project_pk>/{suffix}/",
        f"/api/annotation/judge-validation/{{jv_project}}/{suffix}/",
        API_RESEARCHER_POST,
    )
for suffix in ("record", "thresholds"):
    expect(
        f"api/annotation/judge-validation/validations/<id:validation_pk>/{suffix}/",
        f"/api/annotation/judge-validation/validations/{{validation}}/{suffix}/",
        API_RESEARCHER_POST,
    )


def admin_rows() -> dict[str, tuple[str, tuple[int, ...]]]:
    """One row per admin changelist: the installation's models (users, groups, tokens, lockouts, heartbeats) for
    operators, the research data for researchers; others get 403 (or the admin's login page)."""
    from edufair_web.accounts.admin_site import OperatorModelAdmin

    rows = {"admin/": ("/admin/", (L, 403, 403, 403, 200, 200))}
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        operators = isinstance(model_admin, OperatorModelAdmin)
        rows[f"admin/{meta.app_label}/{meta.model_name}/"] = (
            f"/admin/{meta.app_label}/{meta.model_name}/",
            (L, 403, 403, 403, 403, 200) if operators else (L, 403, 403, 403, 200, 403),
        )
    return rows


def test_every_url_pattern_has_an_expected_row():
    missing = sorted(
        {base_pattern(p) for p in url_patterns() if not p.startswith("admin/") and base_pattern(p) not in EXPECTED}
    )
    stale = sorted(set(EXPECTED) - {base_pattern(p) for p in url_patterns()})
    assert missing == [], f"URL patterns without a row in the permission matrix: {missing}"
    assert stale == [], f"rows for URL patterns that no longer exist: {stale}"


@pytest.fixture
def world(django_user_model):
    """The demo's content (an audit, the SafeTutors project, a judge-validation project) and an outsider."""
    from io import StringIO

    from annotation import models as annotation_models
    from annotation.judge_validation.demo import DEMO_VALIDATION_NAME
    from audits import models as audits_models
    from edufair_web.accounts.models import WorkerHeartbeat
    from edufair_web.accounts.services import user_create_with_role

    # The small demo audit (same pages, fewer dialogues); tests run with DEBUG off, as production does.
    call_command("seed_demo", small=True, production=True, stdout=StringIO())
    user_create_with_role(username="outsider", role="annotator", password="pw-outsider-1")
    from django.utils import timezone

    WorkerHeartbeat.objects.create(hostname="celery@matrix", started_at=timezone.now(), last_seen=timezone.now())

    def first(model):
        obj = model.objects.order_by("pk").first()
        assert obj is not None, f"the demo has no {model.__name__}; the matrix needs one"
        return obj.pk

    stage = first(annotation_models.Stage)
    # The demo's first validation project (the full demo has a second one, for its cue-sensitive judge's audit).
    jv_project = annotation_models.AnnotationProject.objects.get(name=DEMO_VALIDATION_NAME)
    jv_stage = jv_project.stages.order_by("order").first()
    # An item the demo annotator has been handed in the validation stage (their own assignment).
    jv_item = annotation_models.MainItem.objects.filter(stage=jv_stage).order_by("pk").first().item
    # The drill-down links as the results page renders them (query strings name the cell).
    researcher = Client()
    researcher.force_login(django_user_model.objects.get(username="researcher"))
    results_page = researcher.get(f"/audits/results/{first(audits_models.Audit)}/").content.decode()
    links = [html.unescape(href) for href in re.findall(r'href="([^"]+)"', results_page)]
    results_cell = next(link for link in links if "/cell/?" in link)
    cell_page = researcher.get(results_cell).content.decode()
    results_pairs = next(html.unescape(h) for h in re.findall(r'href="([^"]+)"', cell_page) if "/pairs/?" in h)
    return {
        "results_cell": results_cell.replace("{", "{{").replace("}", "}}"),
        "results_pairs": results_pairs.replace("{", "{{").replace("}", "}}"),
        "worker": "celery@matrix",
        "question": first(audits_models.Question),
        "question_import": first(audits_models.QuestionImport),
        "dimension": first(audits_models.DemographicDimension),
        "level": first(audits_models.DemographicLevel),
        "name_cue": first(audits_models.NameCue),
        "template": first(audits_models.PromptTemplate),
        "endpoint": first(audits_models.ModelEndpoint),
        "audit": first(audits_models.Audit),
        "dialogue": first(audits_models.Dialogue),
        "judge_run": audits_models.JudgeRun.objects.create(owner="matrix", task_name="matrix", total=0).pk,
        "project": annotation_models.AnnotationProject.objects.filter(kind="generic").order_by("pk").first().pk,
        "stage": stage,
        "thread": first(annotation_models.Thread),
        "comment": first(annotation_models.Comment),
        "enrollment": annotation_models.Enrollment.objects.get(user__username="annotator", stage_id=stage).pk,
        "label_question": first(annotation_models.LabelQuestion),
        "item": first(annotation_models.Item),
        "gold_label": first(annotation_models.GoldLabel),
        "guideline": first(annotation_models.Guideline),
        "worked_example": first(annotation_models.WorkedExample),
        "jv_project": jv_project.pk,
        "jv_stage": jv_stage.pk,
        "jv_item": jv_item.pk,
        "validation": first(annotation_models.JudgeValidation),
        "person": django_user_model.objects.get(username="outsider").pk,
    }


def users(django_user_model) -> dict[str, object]:
    return {role: django_user_model.objects.get(username=role) for role in ROLES if role != "anonymous"}


def observed_status(client: Client, path: str) -> int:
    return client.get(path).status_code


def test_every_role_gets_the_expected_status_everywhere(world, django_user_model):
    rows = {**EXPECTED, **admin_rows()}
    accounts = users(django_user_model)
    observed: dict[str, list[int]] = {}
    mismatches = []
    for role_index, role in enumerate(ROLES):
        client = Client()
        if role != "anonymous":
            client.force_login(accounts[role])
        for pattern, (template, expected) in rows.items():
            path = template.format(**world)
            status = observed_status(client, path)
            observed.setdefault(pattern, []).append(status)
            if status != expected[role_index]:
                mismatches.append(f"{role:<11} GET {path}: {status}, expected {expected[role_index]}")
    if os.environ.get("PERMISSION_MATRIX_PRINT"):
        for pattern, statuses in observed.items():
            print(f"{pattern!r}: {tuple(statuses)}")
    assert mismatches == [], "\n".join(mismatches)
