"""Blind labelling over HTTP, on every annotation route: two and three annotators label a majority stage
and a discussion stage through the pages and the API, and at each point — some labels in, all in, the
discussion under way, the discussion closed — every annotator-facing page, fragment and API answer is read by
every annotator, a failed one and one still in training included. None may carry another annotator's
justification, time, username or comment, nor a main item's gold, unless the blindness rule allows it (in a
discussion stage, for the item's own annotators, the disputed question while its discussion is open).

The routes come from the URL conf: every annotation pattern needs a row below (as in the permission
matrix), so a new page or endpoint cannot ship unread. Rows marked STAFF are for adjudicators and
researchers; annotators are checked to be refused there.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Comment, Enrollment, GoldLabel, Item, MainItem, Thread, TrainingItem
from annotation.services.enrollment import enrollment_create
from annotation.services.labelling import stage_labelling_configure
from annotation.services.labels import any_phase_label_submit
from annotation.services.projects import gold_label_set
from annotation.services.training import guideline_confirm, norming_acknowledge
from annotation.workflow.answers import Answer
from edufair_web.tests.url_routes import base_pattern, url_patterns

from .main_setup import build_main_stage, pass_gate

pytestmark = pytest.mark.django_db

ANNOTATOR, STAFF = "annotator", "staff"
ROUTES: dict[str, tuple[str, tuple[str, ...]]] = {}


def route(pattern: str, kind: str, *paths: str) -> None:
    assert pattern not in ROUTES, pattern
    ROUTES[pattern] = (kind, paths)


# --- pages -------------------------------------------------------------------------------------------------
route("annotation/", ANNOTATOR, "/annotation/")
route("annotation/training/", ANNOTATOR, "/annotation/training/")
route("annotation/training/<id:stage_pk>/", ANNOTATOR, "/annotation/training/{stage}/")
for step in ("guideline", "examples", "pilot", "feedback", "norming", "qualification"):
    route(f"annotation/training/<id:stage_pk>/{step}/", ANNOTATOR, f"/annotation/training/{{stage}}/{step}/")
route("annotation/threads/<id:pk>/", ANNOTATOR, "/annotation/threads/{thread}/")
route("annotation/label/", ANNOTATOR, "/annotation/label/")
route("annotation/label/<id:stage_pk>/", ANNOTATOR, "/annotation/label/{stage}/")
route(
    "annotation/label/<id:stage_pk>/items/<id:item_pk>/discussion/",
    ANNOTATOR,
    "/annotation/label/{stage}/items/{item}/discussion/",
)
route(
    "annotation/label/<id:stage_pk>/items/<id:item_pk>/revise/",
    ANNOTATOR,
    "/annotation/label/{stage}/items/{item}/revise/",
)
route("annotation/dashboard/<id:stage_pk>/", STAFF, "/annotation/dashboard/{stage}/")
route("annotation/dashboard/<id:stage_pk>/live/", STAFF, "/annotation/dashboard/{stage}/live/")
route("annotation/comments/<id:pk>/pin/", STAFF, "/annotation/comments/{comment}/pin/")
route("annotation/moderation/", STAFF, "/annotation/moderation/")
route("annotation/adjudicate/", STAFF, "/annotation/adjudicate/")
route("annotation/adjudicate/<id:stage_pk>/<id:item_pk>/", STAFF, "/annotation/adjudicate/{stage}/{item}/")
route("annotation/projects/", STAFF, "/annotation/projects/")
route("annotation/projects/new/", STAFF, "/annotation/projects/new/")
route("annotation/projects/<id:pk>/", STAFF, "/annotation/projects/{project}/")
route("annotation/projects/<id:pk>/import/", STAFF, "/annotation/projects/{project}/import/")
route("annotation/projects/<id:pk>/pass-rates.<str:fmt>", STAFF, "/annotation/projects/{project}/pass-rates.csv")
route("annotation/projects/<id:pk>/report/", STAFF, "/annotation/projects/{project}/report/")
route("annotation/projects/<id:pk>/report.<str:fmt>", STAFF, "/annotation/projects/{project}/report.md")
route("annotation/projects/<id:pk>/labels.<str:fmt>", STAFF, "/annotation/projects/{project}/labels.csv")
route("annotation/projects/<id:pk>/label-studio-import/", STAFF, "/annotation/projects/{project}/label-studio-import/")
route("annotation/projects/<id:pk>/conflicts/", STAFF, "/annotation/projects/{project}/conflicts/")
route("annotation/stages/<id:pk>/", STAFF, "/annotation/stages/{stage}/")
route("annotation/stages/<id:pk>/<str:action>/", STAFF, "/annotation/stages/{stage}/guideline/")
route("annotation/enrollments/<id:pk>/replace/", STAFF, "/annotation/enrollments/{enrollment}/replace/")
route("annotation/judge-validation/", STAFF, "/annotation/judge-validation/")
route("annotation/judge-validation/new/", STAFF, "/annotation/judge-validation/new/")
route("annotation/judge-validation/<id:pk>/", STAFF, "/annotation/judge-validation/{project}/")
route("annotation/judge-validation/<id:pk>/workshop/", STAFF, "/annotation/judge-validation/{project}/workshop/")
route("annotation/judge-validation/<id:pk>/<slug:action>/", STAFF, "/annotation/judge-validation/{project}/thresholds/")

# --- API -------------------------------------------------------------------------------------------------
route("api/annotation/training/<id:stage_pk>/", ANNOTATOR, "/api/annotation/training/{stage}/")
for suffix in ("guideline", "examples", "feedback", "norming"):
    route(
        f"api/annotation/training/<id:stage_pk>/{suffix}/", ANNOTATOR, f"/api/annotation/training/{{stage}}/{suffix}/"
    )
route(
    "api/annotation/training/<id:stage_pk>/examples/<id:example_pk>/seen/",
    ANNOTATOR,
    "/api/annotation/training/{stage}/examples/0/seen/",
)
route(
    "api/annotation/training/<id:stage_pk>/<str:phase>/next/",
    ANNOTATOR,
    "/api/annotation/training/{stage}/pilot/next/",
    "/api/annotation/training/{stage}/qualification/next/",
)
route("api/annotation/stages/<id:stage_pk>/labels/", ANNOTATOR, "/api/annotation/stages/{stage}/labels/")
route("api/annotation/threads/<id:thread_pk>/comments/", ANNOTATOR, "/api/annotation/threads/{thread}/comments/")
route("api/annotation/main/<id:stage_pk>/next/", ANNOTATOR, "/api/annotation/main/{stage}/next/")
route("api/annotation/main/<id:stage_pk>/submit/", ANNOTATOR, "/api/annotation/main/{stage}/submit/")
route(
    "api/annotation/main/<id:stage_pk>/items/<id:item_pk>/discussion/",
    ANNOTATOR,
    "/api/annotation/main/{stage}/items/{item}/discussion/",
)
route("api/annotation/main/<id:stage_pk>/recent/", ANNOTATOR, "/api/annotation/main/{stage}/recent/")
route(
    "api/annotation/main/<id:stage_pk>/items/<id:item_pk>/revise/",
    ANNOTATOR,
    "/api/annotation/main/{stage}/items/{item}/revise/",
)
route("api/annotation/main/disputed/", ANNOTATOR, "/api/annotation/main/disputed/")
route("api/annotation/main/<id:stage_pk>/dashboard/", STAFF, "/api/annotation/main/{stage}/dashboard/")
route("api/annotation/main/<id:stage_pk>/aggregation/", STAFF, "/api/annotation/main/{stage}/aggregation/")
route("api/annotation/adjudication/threads/", STAFF, "/api/annotation/adjudication/threads/")
route("api/^annotation/enrollments/$", ANNOTATOR, "/api/annotation/enrollments/")
route("api/^annotation/enrollments/(?P<pk>[^/.]+)/$", ANNOTATOR, "/api/annotation/enrollments/{enrollment}/")
route("api/annotation/comments/<id:comment_pk>/pin/", STAFF, "/api/annotation/comments/{comment}/pin/")
route("api/annotation/main/<id:stage_pk>/settings/", STAFF, "/api/annotation/main/{stage}/settings/")
route(
    "api/annotation/main/<id:stage_pk>/items/<id:item_pk>/discussion/close/",
    STAFF,
    "/api/annotation/main/{stage}/items/{item}/discussion/close/",
)
route("api/annotation/adjudication/", STAFF, "/api/annotation/adjudication/")
route("api/annotation/adjudication/<id:stage_pk>/<id:item_pk>/", STAFF, "/api/annotation/adjudication/{stage}/{item}/")
route("api/annotation/projects/<id:project_pk>/conflicts/", STAFF, "/api/annotation/projects/{project}/conflicts/")
route("api/annotation/conflicts/<id:conflict_pk>/disposition/", STAFF, "/api/annotation/conflicts/1/disposition/")
route("api/annotation/projects/<id:project_pk>/report/", STAFF, "/api/annotation/projects/{project}/report/")
route("api/annotation/projects/<id:project_pk>/labels/", STAFF, "/api/annotation/projects/{project}/labels/")
route(
    "api/annotation/projects/<id:project_pk>/label-studio-import/",
    STAFF,
    "/api/annotation/projects/{project}/label-studio-import/",
)
route("api/annotation/judge-validation/", STAFF, "/api/annotation/judge-validation/")
route("api/annotation/judge-validation/mrbench/", STAFF, "/api/annotation/judge-validation/mrbench/")
route(
    "api/annotation/judge-validation/audits/<id:audit_pk>/status/",
    STAFF,
    "/api/annotation/judge-validation/audits/1/status/",
)
for suffix in ("report", "judges", "workshops", "persona"):
    route(
        f"api/annotation/judge-validation/<id:project_pk>/{suffix}/",
        STAFF,
        f"/api/annotation/judge-validation/{{project}}/{suffix}/",
    )
for suffix in ("record", "thresholds"):
    route(
        f"api/annotation/judge-validation/validations/<id:validation_pk>/{suffix}/",
        STAFF,
        f"/api/annotation/judge-validation/validations/1/{suffix}/",
    )
for collection in ("projects", "questions", "items", "gold-labels", "stages", "guidelines", "worked-examples"):
    route(f"api/^annotation/{collection}/$", STAFF, f"/api/annotation/{collection}/")
    route(f"api/^annotation/{collection}/(?P<pk>[^/.]+)/$", STAFF, f"/api/annotation/{collection}/{{project}}/")
for action in ("apply-preset", "import-items", "pass-rates"):
    route(
        f"api/^annotation/projects/(?P<pk>[^/.]+)/{action}/$", STAFF, f"/api/annotation/projects/{{project}}/{action}/"
    )
for action in ("choose-training-set", "training-items", "add-items"):
    route(f"api/^annotation/stages/(?P<pk>[^/.]+)/{action}/$", STAFF, f"/api/annotation/stages/{{stage}}/{action}/")
route(
    "api/^annotation/enrollments/(?P<pk>[^/.]+)/replace/$", STAFF, "/api/annotation/enrollments/{enrollment}/replace/"
)

# People and crowd links: staff only, but for the invitation page and the crowd pages (a link nobody holds here).
route("annotation/people/", STAFF, "/annotation/people/")
route("annotation/people/<id:pk>/invite/", STAFF, "/annotation/people/1/invite/")
route("annotation/people/<id:pk>/deactivate/", STAFF, "/annotation/people/1/deactivate/")
route("annotation/people/stages/<id:stage_pk>/", STAFF, "/annotation/people/stages/{stage}/")
route("annotation/people/stages/<id:stage_pk>/crowd/", STAFF, "/annotation/people/stages/{stage}/crowd/")
route("annotation/people/stages/<id:stage_pk>/crowd.csv", STAFF, "/annotation/people/stages/{stage}/crowd.csv")
route("annotation/people/enrollments/<id:pk>/replace/", STAFF, "/annotation/people/enrollments/{enrollment}/replace/")
route("annotation/people/welcome/<str:uidb64>/<str:token>/", ANNOTATOR, "/annotation/people/welcome/MQ/not-a-token/")
route("annotation/crowd/<slug:key>/", ANNOTATOR, "/annotation/crowd/no-such-link/")
route("annotation/crowd/<slug:key>/done/", ANNOTATOR, "/annotation/crowd/no-such-link/done/")
route("annotation/crowd/return/", ANNOTATOR, "/annotation/crowd/return/")
route("annotation/crowd/<slug:key>/leave/", ANNOTATOR, "/annotation/crowd/no-such-link/leave/")
route("api/annotation/people/", STAFF, "/api/annotation/people/")
route("api/annotation/people/<id:user_pk>/invite/", STAFF, "/api/annotation/people/1/invite/")
route("api/annotation/people/<id:user_pk>/deactivate/", STAFF, "/api/annotation/people/1/deactivate/")
route(
    "api/annotation/people/welcome/<str:uidb64>/<str:token>/",
    ANNOTATOR,
    "/api/annotation/people/welcome/MQ/not-a-token/",
)
route("api/annotation/people/stages/<id:stage_pk>/enrol/", STAFF, "/api/annotation/people/stages/{stage}/enrol/")
route(
    "api/annotation/people/enrollments/<id:enrollment_pk>/replace/",
    STAFF,
    "/api/annotation/people/enrollments/{enrollment}/replace/",
)
route("api/annotation/people/stages/<id:stage_pk>/crowd/", STAFF, "/api/annotation/people/stages/{stage}/crowd/")
route(
    "api/annotation/people/stages/<id:stage_pk>/crowd/recruits/",
    STAFF,
    "/api/annotation/people/stages/{stage}/crowd/recruits/",
)
route(
    "api/annotation/people/stages/<id:stage_pk>/crowd/export/",
    STAFF,
    "/api/annotation/people/stages/{stage}/crowd/export/",
)
route(
    "api/annotation/people/stages/<id:stage_pk>/crowd/outcomes/",
    STAFF,
    "/api/annotation/people/stages/{stage}/crowd/outcomes/",
)

# The home page lists what to do next, discussions included.
EXTRA_ANNOTATOR_PATHS = ("/",)


def annotation_patterns() -> set[str]:
    """Every annotation route as the resolver spells it (DRF's `.json` twins folded into their route)."""
    found = set()
    for pattern in url_patterns():
        if pattern.startswith("admin/") or "annotation" not in pattern:
            continue
        found.add(base_pattern(pattern))
    return found


def test_every_annotation_route_has_a_row():
    patterns = annotation_patterns()
    assert sorted(patterns - set(ROUTES)) == [], "annotation routes nobody checks for blindness"
    assert sorted(set(ROUTES) - patterns) == [], "rows for routes that no longer exist"


# --- the operation ------------------------------------------------------------------------------------------

NAMES = ("ingrid", "tomas", "yusuf")  # the labelling annotators, in the order they submit
SECONDS = {"ingrid": 731.25, "tomas": 842.75, "yusuf": 953.125, "fiona": 61.375, "paul": 72.625}
MAIN_GOLD = "MAIN-GOLD-RATIONALE-of-item-0"
PILOT_GOLD = "PILOT-GOLD-RATIONALE"


def justification(who: str, item: Item, key: str) -> str:
    return f"JUST-{who}-{item.external_id}-{key}"


def comment_text(who: str) -> str:
    return f"COMMENT-by-{who}-on-item-0"


def answers_of(who: str, item: Item, index: int) -> dict[str, dict]:
    """Item 0: everyone says yes to q1; on q2 the first annotator says yes, the others no (disputed in a
    discussion stage). Item 1: yes to both (settled at once). Every answer carries a justification."""
    values = {"q1": "yes", "q2": "yes" if (item.external_id != "item-0" or index == 0) else "no"}
    return {key: {"value": value, "justification": justification(who, item, key)} for key, value in values.items()}


def build(make_user, *, policy: str, overlap: int) -> SimpleNamespace:
    s = build_main_stage(items=2, overlap=overlap, policy=policy, questions=2)
    s.users = {name: make_user("annotator", username=f"{name}-blind") for name in NAMES[:overlap]}
    for user in s.users.values():
        pass_gate(s.stage, user)
    s.moderator = make_user("adjudicator", username="maria-moderates")
    # A pilot item with gold, a failed annotator and one still in training (at the norming step).
    pilot = Item.objects.create(project=s.project, external_id="pilot-0", payload={"text": "Pilot item"})
    for question in s.questions:
        gold_label_set(item=pilot, question=question, value="yes", rationale=f"{PILOT_GOLD}-{question.key}")
    TrainingItem.objects.create(stage=s.stage, item=pilot, phase=TrainingItem.Phase.PILOT, position=0)
    s.failed = make_user("annotator", username="fiona-failed")
    s.pending = make_user("annotator", username="paul-pending")
    s.trainees = {"fiona": s.failed, "paul": s.pending}
    for name, user in s.trainees.items():
        guideline_confirm(enrollment=enrollment_create(stage=s.stage, user=user, subject="maths"))
        any_phase_label_submit(
            annotator=user,
            stage=s.stage,
            item=pilot,
            phase="pilot",
            answers={
                q.key: Answer(value="no", justification=f"JUST-{user.username}-pilot-{q.key}") for q in s.questions
            },
            seconds=SECONDS[name],
        )
    Enrollment.objects.filter(stage=s.stage, user=s.failed).update(gate_passed=False, status=Enrollment.Status.FAILED)
    norming_acknowledge(enrollment=Enrollment.objects.get(stage=s.stage, user=s.failed))
    Thread.objects.get_or_create(stage=s.stage, item=pilot, kind=Thread.Kind.NORMING, defaults={"reason": "gold"})
    # Both trainees missed the pilot's gold: its norming threads open to them once the pilot is closed.
    stage_labelling_configure(stage=s.stage, pilot_feedback="after_close", pilot_closed=True)
    s.clients = {}
    for who, user in [*s.users.items(), ("fiona", s.failed), ("paul", s.pending), ("maria", s.moderator)]:
        client = Client()
        client.force_login(user)
        s.clients[who] = client
    s.responses = []  # (viewer, what, body) of every write the operation made, read like the pages
    # The norming thread has comments by the pending annotator and the moderator: to the failed one they
    # are "Annotator 1" and "Adjudicator" (the scan below looks for their usernames).
    norming = Thread.objects.get(kind=Thread.Kind.NORMING)
    for who in ("paul", "maria"):
        posted = s.clients[who].post(
            reverse("annotation-thread-comments", args=[norming.pk]),
            {"body": f"norming note by {who}"},
            content_type="application/json",
        )
        assert posted.status_code == 201, posted.content
        s.responses.append((who, "norming comment", posted.content.decode()))
    seen = s.clients["fiona"].get(reverse("annotation-thread-comments", args=[norming.pk])).json()
    assert [(c["author"], c["you"]) for c in seen] == [("Annotator 1", False), ("Adjudicator", False)]
    return s


def label_item(s, who: str, index: int) -> Item:
    """The annotator takes their next item and submits it: the first through the page, the others by API."""
    client = s.clients[who]
    if index == 0:
        url = reverse("annotation:label", args=[s.stage.pk])
        client.get(url)
        assignment = s.stage.assignments.filter(annotator=s.users[who], phase="main", submitted_at__isnull=True).get()
        item = assignment.item
        form = {"item": item.pk, "seconds": SECONDS[who]}
        for key, answer in answers_of(who, item, index).items():
            form[f"answer-{key}"] = answer["value"]
            form[f"justification-{key}"] = answer["justification"]
        response = client.post(url, form)
        assert response.status_code == 302, response.content.decode()[:500]
    else:
        nxt = client.get(reverse("annotation-main-next", args=[s.stage.pk]))
        assert nxt.status_code == 200, nxt.content
        item = Item.objects.get(pk=nxt.json()["item"]["id"])
        response = client.post(
            reverse("annotation-main-submit", args=[s.stage.pk]),
            {"item": item.pk, "answers": answers_of(who, item, index), "seconds": SECONDS[who]},
            content_type="application/json",
        )
        assert response.status_code == 201, response.content
    s.responses.append((who, "submit", response.content.decode()))
    return item


def label_everything(s, names) -> None:
    for who in names:
        index = NAMES.index(who)
        for _ in s.items:
            label_item(s, who, index)


# --- what each viewer may read ---------------------------------------------------------------------------


def markers_of(s, who: str) -> set[str]:
    """Everything of annotator ``who`` that another annotator may see only through the blindness rule."""
    marks = {s.users[who].username, str(SECONDS[who]), comment_text(who)}
    marks |= {justification(who, item, q.key) for item in s.items for q in s.questions}
    marks.add(justification(who, s.items[0], "q2") + "-after")
    return marks


def forbidden_for(s, viewer: str, *, discussion_open: bool) -> set[str]:
    """What ``viewer`` must not find anywhere. In an open discussion an annotator of the item reads the
    others' answers to the disputed question (q2) and the comments, under pseudonyms: never usernames,
    times, the settled question or the other item. Pilot gold only reaches those who submitted the pilot."""
    others = [name for name in s.users if name != viewer]
    forbidden = {marker for who in others for marker in markers_of(s, who)}
    forbidden |= {s.moderator.username, MAIN_GOLD, comment_text("maria")}
    for name, user in s.trainees.items():
        if name != viewer:
            forbidden |= {user.username, str(SECONDS[name])}
            forbidden |= {f"JUST-{user.username}-pilot-{q.key}" for q in s.questions}
    if viewer not in s.trainees:
        forbidden |= {f"{PILOT_GOLD}-{q.key}" for q in s.questions}
    if discussion_open and viewer in s.users:
        item = s.items[0]
        forbidden -= {justification(who, item, "q2") for who in others}
        forbidden -= {justification(who, item, "q2") + "-after" for who in others}
        forbidden -= {comment_text(who) for who in [*others, "maria"]}
    return forbidden


def expand(s, template: str) -> list[str]:
    values = {
        "stage": [s.stage.pk],
        "item": [item.pk for item in s.items],
        "thread": list(Thread.objects.values_list("pk", flat=True)) or [1],
        "comment": list(Comment.objects.values_list("pk", flat=True)) or [1],
        "enrollment": list(Enrollment.objects.values_list("pk", flat=True)),
        "project": [s.project.pk],
    }
    paths = [template]
    for name, options in values.items():
        if "{" + name + "}" in template:
            paths = [p.replace("{" + name + "}", str(v)) for p in paths for v in options]
    return paths


def read_everything(s, viewer: str, *, kind: str = ANNOTATOR) -> dict[str, tuple[int, str]]:
    client = s.clients[viewer]
    seen = {}
    templates = [t for k, paths in ROUTES.values() if k == kind for t in paths]
    if kind == ANNOTATOR:
        templates += list(EXTRA_ANNOTATOR_PATHS)
    for template in templates:
        for path in expand(s, template):
            response = client.get(path)
            seen[path] = (response.status_code, response.content.decode())
    return seen


def assert_blind(s, *, discussion_open: bool = False) -> None:
    """Every annotator, the failed and the pending one, reads every annotator-facing route: no leak."""
    leaks = []
    for viewer in [*s.users, "fiona", "paul"]:
        forbidden = forbidden_for(s, viewer, discussion_open=discussion_open)
        pages = read_everything(s, viewer)
        pages |= {f"{what} ({who})": (0, body) for who, what, body in s.responses if who == viewer}
        for path, (status, body) in pages.items():
            found = sorted(marker for marker in forbidden if marker in body)
            if found:
                leaks.append(f"{viewer} GET {path} ({status}): {found}")
    assert leaks == [], "\n".join(leaks)


def assert_staff_routes_refused(s) -> None:
    """Rows marked STAFF are what they say: an annotator is refused there (roles decide, so one will do)."""
    for path, (status, _) in read_everything(s, NAMES[0], kind=STAFF).items():
        assert status in (302, 403, 404, 405), f"GET {path}: {status}"


def discussion_status(s, viewer: str, item: Item) -> tuple[int, int]:
    client = s.clients[viewer]
    page = client.get(reverse("annotation:discussion", args=[s.stage.pk, item.pk])).status_code
    api = client.get(reverse("annotation-main-discussion", args=[s.stage.pk, item.pk])).status_code
    return page, api


# --- the scenarios -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("overlap", [2, 3])
def test_majority_stage_shows_no_one_anything(make_user, overlap):
    s = build(make_user, policy="majority_reviewer", overlap=overlap)
    label_everything(s, NAMES[: overlap - 1])
    assert_blind(s)
    for viewer in [*s.users, "fiona", "paul"]:
        assert {discussion_status(s, viewer, item) for item in s.items} == {(404, 404)}, viewer

    label_everything(s, NAMES[overlap - 1 : overlap])
    assert MainItem.objects.filter(stage=s.stage, status=MainItem.Status.LABELLING).count() == 0
    gold_label_set(item=s.items[0], question=s.questions[0], value="yes", rationale=MAIN_GOLD)
    assert not Thread.objects.filter(kind=Thread.Kind.ADJUDICATION).exists()  # majority stages never discuss
    assert_blind(s)
    for viewer in [*s.users, "fiona", "paul"]:
        assert {discussion_status(s, viewer, item) for item in s.items} == {(404, 404)}, viewer
    assert_staff_routes_refused(s)


@pytest.mark.parametrize("overlap", [2, 3])
def test_discussion_stage_shows_the_disputed_question_to_the_items_annotators_while_open(make_user, overlap):
    s = build(make_user, policy="discussion_senior", overlap=overlap)
    disputed, settled = s.items
    label_everything(s, NAMES[: overlap - 1])
    assert_blind(s)  # waiting for the last label: nobody sees anything
    for viewer in s.users:
        assert discussion_status(s, viewer, disputed) == (404, 404)

    label_everything(s, NAMES[overlap - 1 : overlap])
    assert MainItem.objects.get(stage=s.stage, item=disputed).status == MainItem.Status.DISCUSSION
    assert MainItem.objects.get(stage=s.stage, item=settled).status == MainItem.Status.RESOLVED
    gold_label_set(item=disputed, question=s.questions[0], value="yes", rationale=MAIN_GOLD)
    thread = Thread.objects.get(kind=Thread.Kind.ADJUDICATION)
    norming = Thread.objects.get(kind=Thread.Kind.NORMING)
    for viewer in s.users:
        assert discussion_status(s, viewer, disputed) == (200, 200)
        assert discussion_status(s, viewer, settled) == (404, 404)  # never for a settled item
    for viewer in ("fiona", "paul"):  # never labelled it: no discussion, on any route
        client = s.clients[viewer]
        assert discussion_status(s, viewer, disputed) == (404, 404)
        assert client.get(reverse("annotation:thread", args=[thread.pk])).status_code == 404
        assert client.get(reverse("annotation-thread-comments", args=[thread.pk])).status_code == 404
        posted = client.post(
            reverse("annotation-thread-comments", args=[thread.pk]), {"body": "hi"}, content_type="application/json"
        )
        assert posted.status_code == 404
        assert client.get(reverse("annotation:thread", args=[norming.pk])).status_code == 200  # norming is theirs
        assert client.get(reverse("annotation:thread", args=[norming.pk + 1000])).status_code == 404

    # The discussion: comments by page, by the thread API and by a moderator; one revised answer.
    first, second = NAMES[0], NAMES[1]
    page = s.clients[first].post(
        reverse("annotation:discussion", args=[s.stage.pk, disputed.pk]), {"comment": comment_text(first)}
    )
    assert page.status_code == 302
    api = s.clients[second].post(
        reverse("annotation-thread-comments", args=[thread.pk]),
        {"body": comment_text(second)},
        content_type="application/json",
    )
    assert api.status_code == 201 and api.json()["author"] == "Annotator 2" and api.json()["you"] is True
    s.responses.append((second, "thread comment", api.content.decode()))
    moderated = s.clients["maria"].post(
        reverse("annotation-main-discussion", args=[s.stage.pk, disputed.pk]),
        {"comment": comment_text("maria"), "answers": {}},
        content_type="application/json",
    )
    assert moderated.status_code == 200
    revised = s.clients[second].post(
        reverse("annotation:discussion", args=[s.stage.pk, disputed.pk]),
        {"answer-q2": "yes", "justification-q2": justification(second, disputed, "q2") + "-after"},
    )
    assert revised.status_code == 302
    assert thread.comments.count() == 3
    assert_blind(s, discussion_open=True)
    discussion_link = reverse("annotation:discussion", args=[s.stage.pk, disputed.pk])
    for viewer in s.users:  # "Label" lists the discussions the annotator is part of
        assert discussion_link in s.clients[viewer].get(reverse("annotation:my-labelling")).content.decode()

    # What an annotator of the item reads: the disputed question only, pseudonyms in submission order,
    # their own column and comments marked, the moderator as "Adjudicator", no usernames nor times.
    for index, viewer in enumerate(s.users):
        body = s.clients[viewer].get(reverse("annotation-main-discussion", args=[s.stage.pk, disputed.pk])).json()
        assert [q["key"] for q in body["questions"]] == ["q2"]
        answers = body["questions"][0]["answers"]
        assert [a["annotator"] for a in answers] == [f"Annotator {n + 1}" for n in range(overlap)]
        assert [a["you"] for a in answers] == [n == index for n in range(overlap)]
        assert all(set(a["pre"]) == {"value", "label", "justification"} for a in answers)
        assert [c["author"] for c in body["discussion"]["comments"]] == ["Annotator 1", "Annotator 2", "Adjudicator"]
        assert [c["you"] for c in body["discussion"]["comments"]] == [index == 0, index == 1, False]
        html = s.clients[viewer].get(reverse("annotation:discussion", args=[s.stage.pk, disputed.pk])).content.decode()
        assert f"Annotator {index + 1} (you)" in html
        thread_page = s.clients[viewer].get(reverse("annotation:thread", args=[thread.pk]))
        assert thread_page.status_code == 302  # the thread page sends them to the discussion page
        assert thread_page["Location"] == reverse("annotation:discussion", args=[s.stage.pk, disputed.pk])
    # Moderators see names, times and every question.
    full = s.clients["maria"].get(reverse("annotation-main-discussion", args=[s.stage.pk, disputed.pk])).json()
    assert [q["key"] for q in full["questions"]] == ["q1", "q2"]
    assert [a["username"] for a in full["questions"][1]["answers"]] == [s.users[n].username for n in s.users]
    assert full["discussion"]["comments"][0]["author"] == s.users[first].username

    # Closed by the adjudicator: nobody but moderators sees it any more, and nobody posts.
    closed = s.clients["maria"].post(reverse("annotation-main-discussion-close", args=[s.stage.pk, disputed.pk]))
    assert closed.status_code == 200
    assert_blind(s)
    for viewer in s.users:
        client = s.clients[viewer]
        assert discussion_status(s, viewer, disputed) == (404, 404)
        assert client.get(reverse("annotation-thread-comments", args=[thread.pk])).status_code == 404
        late = client.post(
            reverse("annotation-thread-comments", args=[thread.pk]), {"body": "late"}, content_type="application/json"
        )
        assert late.status_code == 404
        assert discussion_link not in client.get(reverse("annotation:my-labelling")).content.decode()
    late = s.clients["maria"].post(
        reverse("annotation-thread-comments", args=[thread.pk]), {"body": "late"}, content_type="application/json"
    )
    assert late.status_code == 409
    assert thread.comments.count() == 3
    assert GoldLabel.objects.filter(item=disputed, rationale=MAIN_GOLD).exists()
    assert_staff_routes_refused(s)
