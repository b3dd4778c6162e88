"""An update is held to what a create is: every writable API route (read from the URL conf), admin form and page form.

For each API route that answers PUT or PATCH, the cases below try the update its create would refuse — a worked
example moved onto a pilot item, a gold label's value outside the choices, a row moved to another project — and
expect a 400 naming the field, with the row unchanged. A new writable route fails
`test_every_writable_api_route_declares_its_update_cases` until it declares cases here. The admin's forms for the
models those routes write are held to the same rules (or are read-only), and so is the stage page's example form.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
from django.contrib import admin
from django.forms.models import model_to_dict
from django.test import RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.api.serializers_projects import WorkedExampleSerializer
from annotation.models import (
    AnnotationProject,
    CrowdLink,
    GoldLabel,
    Guideline,
    Item,
    JudgeValidation,
    LabelQuestion,
    RubricVersion,
    Stage,
    StageLabelling,
    TrainingItem,
    WorkedExample,
)
from annotation.services.crowd_entry_settings import crowd_link_save
from annotation.services.projects import project_create, question_create, stage_create
from annotation.services.training import worked_example_add
from annotation.tests.training_setup import build_stage
from audits.models import DemographicDimension, DemographicLevel, ModelEndpoint, NameCue

pytestmark = pytest.mark.django_db

YES_NO = [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]
WRITES = ("put", "patch")


# --- The writable API routes, from the URL conf --------------------------------------------------------------------


def _api_routes(patterns=None, prefix: str = ""):
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from _api_routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern) and prefix.startswith("api/") and entry.name:
            yield entry


def writable_api_routes() -> dict[str, tuple[str, ...]]:
    """URL name → the update methods it answers (a viewset's mapped actions, an API view's handlers)."""
    routes = {}
    for pattern in _api_routes():
        callback = pattern.callback
        actions = getattr(callback, "actions", None)
        view = getattr(callback, "cls", None)
        methods = [m for m in WRITES if (m in actions if actions is not None else hasattr(view, m))]
        if methods:
            routes[pattern.name] = tuple(methods)
    return routes


def route_model(name: str):
    """The model a viewset route writes (None for an API view, whose service writes)."""
    for pattern in _api_routes():
        if pattern.name == name and getattr(pattern.callback, "actions", None):
            return pattern.callback.cls.serializer_class.Meta.model
    return None


# --- One world for every case ---------------------------------------------------------------------------------------


@pytest.fixture
def world(researcher):
    s = build_stage(pilot=2, qualification=1, examples=1, main=1)
    w = SimpleNamespace(**vars(s), researcher=researcher)
    w.other_question = question_create(project=s.project, key="other", prompt="Other?", choices=YES_NO)
    w.second_stage = stage_create(project=s.project, name="Second", questions=[w.other_question])
    w.example = WorkedExample.objects.get(stage=s.stage)
    # An example of a question the first stage does not ask, on one of its pilot items: allowed, until the first
    # stage would ask that question too.
    w.second_example = worked_example_add(
        stage=w.second_stage, item=s.pilot_items[0], question=w.other_question, kind="borderline", value="yes",
        rationale="Second stage's example.",
    )  # fmt: skip
    w.gold = GoldLabel.objects.get(item=s.pilot_items[0], question=s.question)
    w.item = s.main_items[0]
    w.far = project_create(name="Another project")
    w.far_question = question_create(project=w.far, key="far", prompt="Far?", choices=YES_NO)
    w.far_item = Item.objects.create(project=w.far, external_id="far-1", payload={"text": "far"})
    w.crowd = crowd_link_save(stage=s.stage, values={"max_recruits": 3})
    rubric = RubricVersion.objects.create(judge_template_id=987654, name="judge", version=1, guideline="G")
    w.validation = JudgeValidation.objects.create(project=s.project, judge_name="judge", rubric=rubric)
    w.endpoint = ModelEndpoint.objects.create(
        name="sim", provider=ModelEndpoint.Provider.SIMULATION, model="sim", simulation_config={"seed": 0, "bias": []}
    )
    w.dimension = DemographicDimension.objects.create(key="language", name="Language")
    DemographicLevel.objects.create(dimension=w.dimension, key="english", label="English")
    w.level = DemographicLevel.objects.create(dimension=w.dimension, key="other_l1", label="Other")
    w.name_cue = NameCue.objects.create(name="Alex", gender="female", ethnicity="white")
    return w


def _example_put(w, **change) -> dict:
    body = {
        "stage": w.stage.pk, "item": w.example.item_id, "question": w.question.pk, "kind": w.example.kind,
        "value": w.example.value, "rationale": w.example.rationale,
    }  # fmt: skip
    return {**body, **change}


@dataclass(frozen=True)
class Case:
    """An update the create refuses: ``body`` sent by ``method`` to ``obj``'s route; the 400 names ``field``."""

    name: str
    method: str
    obj: Callable  # world → the row the route updates
    body: Callable  # world → the request body
    field: str | None  # named in the 400's body; None when the service's refusal is a plain message
    url_args: Callable | None = None  # world → the route's arguments (default: the row's id)


API_CASES: dict[str, list[Case]] = {
    "annotation-example-detail": [
        Case("item onto a pilot item", "patch", lambda w: w.example, lambda w: {"item": w.pilot_items[1].pk}, "item"),
        Case("item onto a qualification item", "patch", lambda w: w.example,
             lambda w: {"item": w.qualification_items[0].pk}, "item"),
        Case("item of another project", "patch", lambda w: w.example, lambda w: {"item": w.far_item.pk}, "item"),
        Case("question the stage does not ask", "patch", lambda w: w.example,
             lambda w: {"question": w.other_question.pk}, "question"),
        Case("stage moved", "patch", lambda w: w.example, lambda w: {"stage": w.second_stage.pk}, "stage"),
        Case("value not a choice", "patch", lambda w: w.example, lambda w: {"value": "maybe"}, "value"),
        Case("PUT onto a pilot item", "put", lambda w: w.example,
             lambda w: _example_put(w, item=w.pilot_items[1].pk), "item"),
    ],
    "annotation-gold-detail": [
        Case("value not a choice", "patch", lambda w: w.gold, lambda w: {"value": "maybe"}, "value"),
        Case("question of another project", "patch", lambda w: w.gold,
             lambda w: {"question": w.far_question.pk}, "question"),
        Case("item moved", "patch", lambda w: w.gold, lambda w: {"item": w.item.pk}, "item"),
    ],
    "annotation-item-detail": [
        Case("project moved", "patch", lambda w: w.item, lambda w: {"project": w.far.pk}, "project"),
        Case("id too long", "patch", lambda w: w.item, lambda w: {"external_id": "x" * 201}, "external_id"),
    ],
    "annotation-question-detail": [
        Case("project moved", "patch", lambda w: w.question, lambda w: {"project": w.far.pk}, "project"),
        Case("no choices", "patch", lambda w: w.question, lambda w: {"choices": []}, "choices"),
        Case("a repeated value", "patch", lambda w: w.question,
             lambda w: {"choices": [{"value": "yes"}, {"value": "yes"}, {"value": "no"}]}, "choices"),
        Case("a value gold holds dropped", "patch", lambda w: w.question,
             lambda w: {"choices": [{"value": "yes", "label": "Yes"}]}, "choices"),
    ],
    "annotation-stage-detail": [
        Case("project moved", "patch", lambda w: w.stage, lambda w: {"project": w.far.pk}, "project"),
        Case("question of another project", "patch", lambda w: w.stage,
             lambda w: {"questions": [w.question.pk, w.far_question.pk]}, "questions"),
        Case("question its example teaches dropped", "patch", lambda w: w.stage,
             lambda w: {"questions": [w.other_question.pk]}, "questions"),
        Case("question gained whose example shows a pilot item", "patch", lambda w: w.stage,
             lambda w: {"questions": [w.question.pk, w.other_question.pk]}, "questions"),
    ],
    "annotation-project-detail": [
        Case("preset written, not applied", "patch", lambda w: w.project, lambda w: {"preset": "safetutors"}, "preset"),
        Case("kind changed", "patch", lambda w: w.project, lambda w: {"kind": "judge_validation"}, "kind"),
    ],
    "annotation-main-settings": [
        Case("reservation of no time", "put", lambda w: StageLabelling.objects.get_or_create(stage=w.stage)[0],
             lambda w: {"reservation_minutes": 0}, None, url_args=lambda w: [w.stage.pk]),
    ],
    "annotation-jv-thresholds": [
        Case("α out of bounds", "put", lambda w: w.validation,
             lambda w: {"human_alpha_min": 2, "judge_agreement_min": 0.5}, "human_alpha_min"),
    ],
    "annotation-crowd": [
        Case("no places", "put", lambda w: w.crowd, lambda w: {"max_recruits": 0}, None,
             url_args=lambda w: [w.stage.pk]),
    ],
    "model-endpoint-detail": [
        Case("temperature out of bounds", "patch", lambda w: w.endpoint, lambda w: {"temperature": 5}, "temperature"),
    ],
    "demographic-dimension-detail": [
        Case("key not a slug", "patch", lambda w: w.dimension, lambda w: {"key": "not a slug"}, "key"),
    ],
    "demographic-level-detail": [
        Case("key of a sibling", "patch", lambda w: w.level, lambda w: {"key": "english"}, None),
    ],
    "name-cue-detail": [
        Case("unknown gender", "patch", lambda w: w.name_cue, lambda w: {"gender": "x"}, "gender"),
    ],
}  # fmt: skip


def test_every_writable_api_route_declares_its_update_cases():
    routes = writable_api_routes()
    assert "annotation-example-detail" in routes  # the walk finds the router's routes
    assert set(routes) == set(API_CASES), "declare update cases for a new writable route (or drop a gone one)"


def _stored(obj) -> dict:
    obj.refresh_from_db()
    return model_to_dict(obj)


@pytest.mark.parametrize("route", sorted(API_CASES))
def test_an_update_is_refused_what_the_create_refuses(route, world, client):
    client.force_login(world.researcher)
    failures = []
    for case in API_CASES[route]:
        obj = case.obj(world)
        before = _stored(obj)
        url = reverse(route, args=case.url_args(world) if case.url_args else [obj.pk])
        response = getattr(client, case.method)(url, case.body(world), content_type="application/json")
        body = response.json() if response.status_code == 400 else {}
        if response.status_code != 400 or (case.field and case.field not in body):
            failures.append(f"{case.name}: {response.status_code} {response.content.decode()[:200]}")
        elif _stored(obj) != before:
            failures.append(f"{case.name}: refused, yet the row changed")
    assert not failures, failures


def test_a_fixed_field_sent_unchanged_is_no_change(world, client):
    """A PUT repeats every field: the stage an example already has is accepted, and the rest is saved."""
    client.force_login(world.researcher)
    url = reverse("annotation-example-detail", args=[world.example.pk])
    response = client.put(url, _example_put(world, rationale="Clearer."), content_type="application/json")
    assert response.status_code == 200, response.content
    world.example.refresh_from_db()
    assert world.example.rationale == "Clearer."


# --- The admin ------------------------------------------------------------------------------------------------------


def _admin_form(world, model, obj, **change):
    model_admin = admin.site._registry[model]
    request = RequestFactory().post("/")
    request.user = world.researcher
    form_class = model_admin.get_form(request, obj, change=True)
    unbound = form_class(instance=obj)
    data = {}
    for name in unbound.fields:
        value = unbound[name].value()
        if value is not None:
            data[name] = value
    for name, value in change.items():
        data[name] = json.dumps(value) if isinstance(value, list | dict) and name == "choices" else value
    return form_class(data=data, instance=obj), model_admin.get_readonly_fields(request, obj)


# Model → (the change the create refuses, the field the form names) or "read-only" (only its service writes).
ADMIN_CASES = {
    WorkedExample: [
        (lambda w: w.example, lambda w: {"item": w.pilot_items[1].pk}, "item"),
        (lambda w: w.example, lambda w: {"value": "maybe"}, "value"),
    ],
    GoldLabel: [(lambda w: w.gold, lambda w: {"value": "maybe"}, "value")],
    LabelQuestion: [(lambda w: w.question, lambda w: {"choices": [{"value": "yes"}]}, "choices")],
    Stage: [(lambda w: w.stage, lambda w: {"questions": [w.question.pk, w.other_question.pk]}, None)],
    ModelEndpoint: [(lambda w: w.endpoint, lambda w: {"temperature": 5}, "temperature")],
    DemographicDimension: [(lambda w: w.dimension, lambda w: {"key": "not a slug"}, "key")],
    DemographicLevel: [(lambda w: w.level, lambda w: {"key": "english"}, None)],
    NameCue: [(lambda w: w.name_cue, lambda w: {"gender": "x"}, "gender")],
    AnnotationProject: [],
    Item: [],
}
# Written only through their services (guideline versions, drawn training sets, settings, verdicts, crowd links).
ADMIN_READ_ONLY = (Guideline, TrainingItem, StageLabelling, JudgeValidation)
# Fields an existing row keeps, shown read-only by the admin (the API refuses a change with a 400).
ADMIN_FIXED = {
    WorkedExample: {"stage"},
    GoldLabel: {"item", "question"},
    LabelQuestion: {"project"},
    Stage: {"project"},
    Item: {"project"},
    AnnotationProject: {"kind", "source_audit_id", "preset"},
}


def test_every_model_an_api_route_writes_has_admin_cases():
    written = {route_model(name) for name in writable_api_routes()} - {None}
    assert written <= set(ADMIN_CASES), written - set(ADMIN_CASES)


def test_the_admin_refuses_what_the_create_refuses(world):
    failures = []
    for model, cases in ADMIN_CASES.items():
        for obj_of, change_of, field in cases:
            obj = obj_of(world)
            before = _stored(obj)
            form, _ = _admin_form(world, model, obj, **change_of(world))
            if form.is_valid():
                failures.append(f"{model.__name__} {change_of(world)}: accepted")
            elif field and field not in form.errors:
                failures.append(f"{model.__name__}: errors {dict(form.errors)} do not name {field}")
            assert _stored(obj) == before
    assert not failures, failures


def test_the_admin_keeps_fixed_fields_read_only(world, client):
    client.force_login(world.researcher)
    rows = {
        WorkedExample: world.example, GoldLabel: world.gold, LabelQuestion: world.question, Stage: world.stage,
        Item: world.item, AnnotationProject: world.project,
    }  # fmt: skip
    for model, fixed in ADMIN_FIXED.items():
        form, readonly = _admin_form(world, model, rows[model])
        assert fixed <= set(readonly), (model.__name__, readonly)
        assert not fixed & set(form.fields), model.__name__
        url = reverse(f"admin:annotation_{model._meta.model_name}_change", args=[rows[model].pk])
        assert client.get(url).status_code == 200, model.__name__


def test_the_admin_shows_service_written_rows_only(world, client):
    client.force_login(world.researcher)
    rows = {
        Guideline: world.stage.guidelines.first(), TrainingItem: TrainingItem.objects.filter(stage=world.stage).first(),
        StageLabelling: StageLabelling.objects.get_or_create(stage=world.stage)[0], JudgeValidation: world.validation,
    }  # fmt: skip
    assert set(rows) == set(ADMIN_READ_ONLY)
    for model, row in rows.items():
        url = reverse(f"admin:annotation_{model._meta.model_name}_change", args=[row.pk])
        assert client.get(url).status_code == 200, model.__name__  # still shown
        assert client.post(url, {}).status_code == 403, model.__name__
        assert client.post(reverse(f"admin:annotation_{model._meta.model_name}_add"), {}).status_code == 403


def test_the_crowd_links_admin_goes_through_its_service(world):
    """The crowd link's admin form already runs the page's and the API's service (`crowd_link_save`)."""
    form, _ = _admin_form(world, CrowdLink, world.crowd, max_recruits=0)
    assert not form.is_valid()


# --- The page forms -------------------------------------------------------------------------------------------------


def test_the_stage_pages_example_form_refuses_a_pilot_item(world, client):
    """Posting an example again for the same item and question updates it: through the same rule."""
    client.force_login(world.researcher)
    url = reverse("annotation:stage-action", args=[world.stage.pk, "example"])
    form = {"item": world.pilot_items[1].external_id, "question": world.question.pk, "kind": "borderline",
            "value": "yes", "rationale": "Why."}  # fmt: skip
    response = client.post(url, form)
    assert "shown before the test" in response.content.decode()
    assert not WorkedExample.objects.filter(stage=world.stage, item=world.pilot_items[1]).exists()


def test_the_schema_says_which_fields_are_fixed():
    """The schema's field descriptions come from the serializers' help texts."""
    fields = WorkedExampleSerializer().fields
    assert "Set at creation" in fields["stage"].help_text
    assert "Set at creation" not in (fields["item"].help_text or "")
