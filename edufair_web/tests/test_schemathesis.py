"""Hostile input against the API: schemathesis generates requests from the OpenAPI schema at /api/schema/ and
sends them, authenticated as each role (researcher, adjudicator, annotator), to the Django app in-process
over WSGI. No request may get a 500, and every documented response must match its schema.

Bounded: a few generated examples per operation and role (`EXAMPLES_PER_OPERATION`), no shrinking and no
example database, so the test costs about the same on every run and fits in CI. Path parameters are drawn
both at random and from the ids of real objects seeded below (a finished simulation audit, an annotation
project with a main stage, a judge-validation project), so the generated requests reach the views' code and
not only their 404s. Every operation with path parameters is also sent hostile ones (`HOSTILE_PATH_VALUES`: a
number no database column holds, a negative, a float, a word), alone and next to a real id, which may answer
404 or 400 but never a server error; and every query parameter is sent the same values (with real ids in the
path, so the query is read), which may answer 400 but never a server error.
"""

from __future__ import annotations

import os
import re

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import response_schema_conformance

from edufair_web.accounts.roles import ADJUDICATOR, ANNOTATOR, RESEARCHER
from edufair_web.accounts.tokens import api_token_issue

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

# A deeper local run: SCHEMATHESIS_EXAMPLES=50 pytest edufair_web/tests/test_schemathesis.py
EXAMPLES_PER_OPERATION = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "4"))
CHECKS = [not_a_server_error, response_schema_conformance]
# Beyond any 64-bit column, negative, a float that int() refuses, a word.
HOSTILE_PATH_VALUES = ["99999999999999999999", "-1", "1e9999", "abc"]


@pytest.fixture
def world(make_user):
    """Real objects for path parameters: ids by the path prefix they belong to."""
    from annotation.judge_validation.services import validation_project_create
    from annotation.models import Thread
    from annotation.selectors.judge_validation import validation_stage
    from annotation.tests.judge_validation_setup import run_simulation_audit
    from annotation.tests.main_setup import build_main_stage, pass_gate

    audit = run_simulation_audit("schemathesis audit", questions=1)
    validation_project = validation_project_create(audit=audit, size=6, seed=0, training_pool=2)
    main = build_main_stage(items=4, overlap=2, name="schemathesis project")
    users = {role: make_user(role) for role in (RESEARCHER, ADJUDICATOR, ANNOTATOR)}
    pass_gate(main.stage, users[ANNOTATOR])
    pass_gate(validation_stage(validation_project), users[ANNOTATOR])
    return {
        "users": users,
        "audit": audit,
        "main": main,
        "validation_project": validation_project,
        "threads": list(Thread.objects.values_list("pk", flat=True)[:2]),
    }


def known_ids(path: str, world) -> dict[str, list]:
    """Ids of seeded objects that fit the path's parameters."""
    from annotation.models import Comment, Enrollment, GoldLabel, Guideline, WorkedExample
    from audits.models import (
        DemographicDimension,
        DemographicLevel,
        Dialogue,
        ModelEndpoint,
        NameCue,
        PromptTemplate,
        Question,
        QuestionImport,
    )

    audit = world["audit"]
    main = world["main"]
    projects = [main.project.pk, world["validation_project"].pk]
    stages = [main.stage.pk, *world["validation_project"].stages.values_list("pk", flat=True)]
    items = [main.items[0].pk, *world["validation_project"].items.values_list("pk", flat=True)[:2]]
    by_prefix = [
        ("/api/annotation/projects/", {"id": projects, "project_pk": projects}),
        ("/api/annotation/judge-validation/audits/", {"audit_pk": [audit.pk]}),
        ("/api/annotation/judge-validation/validations/", {"validation_pk": _ids("annotation", "JudgeValidation")}),
        ("/api/annotation/judge-validation/", {"project_pk": projects}),
        ("/api/annotation/stages/", {"id": stages, "stage_pk": stages}),
        (
            "/api/annotation/people/",
            {"stage_pk": stages, "enrollment_pk": _pks(Enrollment), "user_pk": [world["users"][ANNOTATOR].pk]},
        ),
        ("/api/annotation/main/", {"stage_pk": stages, "item_pk": items}),
        ("/api/annotation/adjudication/", {"stage_pk": stages, "item_pk": items}),
        ("/api/annotation/training/", {"stage_pk": stages, "example_pk": _pks(WorkedExample), "phase": ["pilot"]}),
        ("/api/annotation/items/", {"id": items}),
        ("/api/annotation/questions/", {"id": [q.pk for q in main.questions]}),
        ("/api/annotation/gold-labels/", {"id": _pks(GoldLabel)}),
        ("/api/annotation/guidelines/", {"id": _pks(Guideline)}),
        ("/api/annotation/worked-examples/", {"id": _pks(WorkedExample)}),
        ("/api/annotation/enrollments/", {"id": _pks(Enrollment)}),
        ("/api/annotation/threads/", {"thread_pk": world["threads"]}),
        ("/api/annotation/comments/", {"comment_pk": _pks(Comment)}),
        ("/api/annotation/conflicts/", {"conflict_pk": _ids("annotation", "CrossStageConflict")}),
        ("/api/audits/", {"id": [audit.pk]}),
        ("/api/dialogues/", {"id": _pks(Dialogue)}),
        ("/api/model-endpoints/", {"id": _pks(ModelEndpoint)}),
        ("/api/questions/", {"id": _pks(Question)}),
        ("/api/question-imports/", {"id": _pks(QuestionImport)}),
        ("/api/demographic-dimensions/", {"id": _pks(DemographicDimension)}),
        ("/api/demographic-levels/", {"id": _pks(DemographicLevel)}),
        ("/api/name-cues/", {"id": _pks(NameCue)}),
        ("/api/prompt-templates/", {"id": _pks(PromptTemplate)}),
    ]
    for prefix, ids in by_prefix:
        if path.startswith(prefix):
            return {name: values for name, values in ids.items() if values}
    return {}


def _pks(model, limit: int = 2) -> list[int]:
    return list(model.objects.order_by("pk").values_list("pk", flat=True)[:limit])


def _ids(app_label: str, model_name: str) -> list[int]:
    from django.apps import apps

    return _pks(apps.get_model(app_label, model_name))


def case_strategy(operation, world):
    """Cases with random path parameters, and cases whose path parameters name seeded objects."""
    names = re.findall(r"{(\w+)}", operation.path)
    if not names:
        return operation.as_strategy()
    ids = known_ids(operation.path, world)
    if not all(name in ids for name in names):
        return operation.as_strategy()
    seeded = st.fixed_dictionaries({name: st.sampled_from(ids[name]) for name in names}).flatmap(
        lambda values: operation.as_strategy(path_parameters=values)
    )
    return st.one_of(seeded, operation.as_strategy())


def hostile_query_parameters(operation, world) -> list[tuple[dict, dict]]:
    """(path parameters, query) pairs: each query parameter (ids, pages, counts, rates, words) given each hostile
    value, alone, with seeded ids in the path (operations whose path no seeded object fits are left out)."""
    names = re.findall(r"{(\w+)}", operation.path)
    ids = known_ids(operation.path, world)
    if not all(name in ids for name in names):
        return []
    path = {name: ids[name][0] for name in names}
    return [(path, {parameter.name: value}) for parameter in operation.query for value in HOSTILE_PATH_VALUES]


def hostile_path_parameters(operation, world) -> list[dict]:
    """Every hostile value in every path parameter at once; then, with real ids in the others, in each one alone."""
    names = re.findall(r"{(\w+)}", operation.path)
    if not names:
        return []
    cases = [dict.fromkeys(names, value) for value in HOSTILE_PATH_VALUES]
    ids = known_ids(operation.path, world)
    if len(names) > 1 and all(name in ids for name in names):
        for hostile in names:
            for value in HOSTILE_PATH_VALUES[:2]:
                cases.append({name: value if name == hostile else ids[name][0] for name in names})
    return cases


@pytest.mark.parametrize("role", [RESEARCHER, ADJUDICATOR, ANNOTATOR])
def test_no_server_errors_and_no_schema_violations(role, world):
    _, token = api_token_issue(user=world["users"][role])
    headers = {"Authorization": f"Token {token}"}
    # The schema itself is for researchers; every role's requests are sent from it.
    _, researcher_token = api_token_issue(user=world["users"][RESEARCHER])
    schema = schemathesis.openapi.from_wsgi(
        "/api/schema/", get_wsgi_application(), headers={"Authorization": f"Token {researcher_token}"}
    )
    failures: list[str] = []
    operations = hostile_requests = hostile_queries = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=case_strategy(operation, world))
        def check(case):
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            check()
        except (Exception, FailureGroup) as error:  # one report for all operations, not a stop at the first
            failures.append(f"{operation.label}: {error}")
        for path_parameters in hostile_path_parameters(operation, world):
            hostile_requests += 1
            try:
                operation.Case(path_parameters=path_parameters).call_and_validate(
                    headers=headers, checks=[not_a_server_error]
                )
            except (Exception, FailureGroup) as error:
                failures.append(f"{operation.label} with path {path_parameters}: {error}")
        for path_parameters, query in hostile_query_parameters(operation, world):
            hostile_queries += 1
            try:
                operation.Case(path_parameters=path_parameters, query=query).call_and_validate(
                    headers=headers, checks=[not_a_server_error]
                )
            except (Exception, FailureGroup) as error:
                failures.append(f"{operation.label} with query {query}: {error}")
    assert operations > 100, "the schema lists fewer operations than the API has"
    assert hostile_requests > 2 * operations, "hostile path parameters were not sent"
    assert hostile_queries > 40, "hostile query parameters were not sent"
    assert not failures, f"{len(failures)} operation(s) failed as {role}:\n\n" + "\n\n".join(failures)
