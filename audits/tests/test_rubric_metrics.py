"""A metric is added by a registry record and a rubric version that asks for it: turns judged under an older version
still parse a real judge's reply that lacks the new metric, and under the new version such a reply is refused. The
simulated judge, the rubric page and the analysis with its results page follow the rubric version's own metrics."""

import asyncio
import json

import pytest
from django.urls import reverse

from audits.analysis_parameters import AnalysisParameters
from audits.engine import CallOutcome
from audits.forms import PromptTemplateCreateForm
from audits.judge import PARSE_OK, PARSE_UNPARSABLE, TurnJudgement
from audits.llm.dialogue import TurnToJudge, turn_judge
from audits.llm.simulation import simulate
from audits.models import PromptTemplate, Turn, TurnScore
from audits.prompt_templates import JUDGE_RUBRIC
from audits.services import judging
from audits.services.analysis import audit_analysis
from audits.services.design import TemplateTextError, default_template, prompt_template_revise
from audits.services.dialogue_batches import _batch_plan, _dialogue_job, condition_facts, question_facts
from audits.tests.engine_factories import scored_audit
from edufair_web import rubric_metrics
from edufair_web.rubric_metrics import DEFAULT_RUBRIC_METRICS, LabelQuestion, Metric

SIXTH = "checks_understanding"
# What a real judge answers to today's rubric: prose, a fenced object of the five metrics and a rationale.
REAL_REPLY = (
    "Here is my rating of the tutor turn.\n```json\n"
    '{"mistake_recognize": 2, "answer_leakage": 0, "step_scaffolded": 1, "actionability": 2, '
    '"corrective_tone": -1, "rationale": "The tutor names the slip and asks for the next step."}\n```'
)


@pytest.fixture
def sixth_metric(monkeypatch):
    """The registry with a sixth metric: the one place a new metric is declared."""
    metric = Metric(
        key=SIXTH,
        label="Checking understanding",
        not_applicable="",
        higher="their understanding checked more often",
        lower="their understanding checked less often",
        propensity=0.5,
        question=LabelQuestion(
            asks="does the tutor check that the student understood?", labels=("No", "Partly", "Yes"), help_text=""
        ),
    )
    monkeypatch.setitem(rubric_metrics.REGISTRY, SIXTH, metric)
    return metric


@pytest.fixture
def real_judge(monkeypatch):
    """The engine's judge call answered as a real model answers, whatever the rubric asks; the requests are kept."""
    asked = []

    async def model_call(client, endpoint, purpose, messages, **kwargs):
        asked.append(messages)
        return CallOutcome(text=REAL_REPLY, call_id=None)

    monkeypatch.setattr("audits.llm.dialogue.model_call", model_call)
    return asked


def judged_under(rubric: PromptTemplate) -> TurnJudgement:
    turn = TurnToJudge(turn_index=1, turn_text="Check the second row again.", context=[], question="3x4?", answer="12")
    return asyncio.run(
        turn_judge(turn, None, None, template=rubric.text, max_reasks=1, allowed=rubric.judge_allowed_values)
    )


def test_a_reply_without_the_new_metric_parses_under_the_old_rubric_and_is_refused_under_the_new(
    sixth_metric, real_judge
):
    old = PromptTemplate(kind=JUDGE_RUBRIC, text="Rate ${tutor_turn}", metrics=list(DEFAULT_RUBRIC_METRICS))
    new = PromptTemplate(kind=JUDGE_RUBRIC, text="Rate ${tutor_turn}", metrics=[*DEFAULT_RUBRIC_METRICS, SIXTH])

    before = judged_under(old)
    assert before.status == PARSE_OK and before.asks == 1
    assert set(before.scores) == set(DEFAULT_RUBRIC_METRICS) and before.scores["corrective_tone"] == -1

    real_judge.clear()
    after = judged_under(new)
    assert after.status == PARSE_UNPARSABLE and after.scores == {}
    assert after.problem == f"the key {SIXTH!r} is missing"
    assert after.metrics == (*DEFAULT_RUBRIC_METRICS, SIXTH)
    # The re-ask names the new version's metrics, the new one among them.
    assert len(real_judge) == 2 and SIXTH in real_judge[1][-1]["content"]


@pytest.mark.django_db
def test_a_rubric_version_stores_its_metrics_and_only_registered_ones(sixth_metric):
    old = default_template(JUDGE_RUBRIC)
    assert old.metrics == list(DEFAULT_RUBRIC_METRICS)
    new = prompt_template_revise(template=old, text=old.text, metrics=[*old.metrics, SIXTH])
    assert PromptTemplate.objects.get(pk=new.pk).judge_metrics == (*DEFAULT_RUBRIC_METRICS, SIXTH)
    assert prompt_template_revise(template=new, text=new.text).metrics == [*DEFAULT_RUBRIC_METRICS, SIXTH]
    with pytest.raises(TemplateTextError, match="unknown metric"):
        prompt_template_revise(template=old, text=old.text, metrics=[*old.metrics, "not_registered"])
    assert old.judge_allowed_values == rubric_metrics.allowed_values(DEFAULT_RUBRIC_METRICS)


@pytest.mark.django_db
def test_the_rubric_of_a_turn_reaches_the_parser_at_each_call_site(sixth_metric, monkeypatch):
    audit = scored_audit("sixth metric audit", tutors=1, questions=1, dimensions=("first_language",), tutor_turns=1)
    old = audit.judge_template
    new = prompt_template_revise(template=old, text=old.text, metrics=[*old.metrics, SIXTH])

    # The engine's judge calls: an audit's dialogues are judged under its own rubric version.
    type(audit).objects.filter(pk=audit.pk).update(judge_template=new)
    # A worker's plan closes stale connections first; the test's one connection holds its transaction.
    monkeypatch.setattr("audits.services.dialogue_batches.close_old_connections", lambda: None)
    plan = _batch_plan(audit.pk, [])
    item = {"question": question_facts(audit.questions.get()), "condition": condition_facts(audit.conditions.first())}
    assert _dialogue_job(plan, item).allowed == new.judge_allowed_values

    # Re-judging stored turns: the rubric named is the one the parser holds replies to.
    seen = []
    monkeypatch.setattr(judging, "judgements_run", lambda **kw: seen.append(kw["allowed"]) or judging.JudgingResult())
    turn_ids = list(Turn.objects.filter(dialogue__audit=audit, role="tutor").values_list("pk", flat=True))
    judging.turns_judge(turn_ids=turn_ids, judge_endpoint=audit.judge_endpoint, judge_template=old)
    judging.turns_judge(turn_ids=turn_ids, judge_endpoint=audit.judge_endpoint, judge_template=new)
    assert [set(allowed) for allowed in seen] == [set(DEFAULT_RUBRIC_METRICS), {*DEFAULT_RUBRIC_METRICS, SIXTH}]

    # A refused reply is stored as one unscored row per metric the new version asked for; the old scores stay.
    refused = TurnJudgement(1, PARSE_UNPARSABLE, raw=REAL_REPLY, problem="missing", metrics=new.judge_metrics)
    judging.turn_scores_store(judgements={turn_ids[0]: refused}, rubric=new)
    assert set(TurnScore.objects.filter(turn_id=turn_ids[0], rubric=new).values_list("metric", flat=True)) == {
        *DEFAULT_RUBRIC_METRICS,
        SIXTH,
    }
    assert TurnScore.objects.filter(turn_id=turn_ids[0], rubric=old).count() == len(DEFAULT_RUBRIC_METRICS)


@pytest.mark.django_db
def test_the_api_states_and_takes_a_rubric_versions_metrics(researcher_client, sixth_metric):
    judge = default_template(JUDGE_RUBRIC)
    url = f"/api/prompt-templates/{judge.pk}/"
    assert researcher_client.get(url).json()["metrics"] == list(DEFAULT_RUBRIC_METRICS)

    body = {"text": judge.text, "metrics": [*DEFAULT_RUBRIC_METRICS, SIXTH]}
    revised = researcher_client.post(f"{url}revise/", body, content_type="application/json")
    assert revised.status_code == 201 and revised.json()["metrics"] == [*DEFAULT_RUBRIC_METRICS, SIXTH]
    body["metrics"] = ["not_registered"]
    refused = researcher_client.post(f"{url}revise/", body, content_type="application/json")
    assert refused.status_code == 400 and "unknown metric(s) not_registered" in refused.json()["metrics"][0]

    reveal = {"kind": "reveal_check", "name": "strict", "text": "${answer} in ${tutor_turn}?", "metrics": [SIXTH]}
    created = researcher_client.post("/api/prompt-templates/", reveal, content_type="application/json")
    assert created.status_code == 400 and created.json()["metrics"] == ["only a judge rubric names metrics"]


@pytest.fixture
def simulated_judge(monkeypatch):
    """The engine's judge call answered by the simulation provider, as a simulation endpoint's request reaches it;
    the contexts it was given are kept."""
    contexts = []

    async def model_call(client, endpoint, purpose, messages, *, facts, hints, **kwargs):
        context = {**facts, **hints, "purpose": purpose}
        contexts.append(context)
        return CallOutcome(text=simulate(purpose, messages, context, {"seed": 3}).text, call_id=None)

    monkeypatch.setattr("audits.llm.dialogue.model_call", model_call)
    return contexts


def test_the_simulated_judge_answers_the_rubric_versions_own_metrics(sixth_metric, simulated_judge):
    default = PromptTemplate(kind=JUDGE_RUBRIC, text="Rate ${tutor_turn}", metrics=list(DEFAULT_RUBRIC_METRICS))
    six = PromptTemplate(kind=JUDGE_RUBRIC, text="Rate ${tutor_turn}", metrics=[*DEFAULT_RUBRIC_METRICS, SIXTH])
    three = PromptTemplate(
        kind=JUDGE_RUBRIC, text="Rate ${tutor_turn}", metrics=["answer_leakage", SIXTH, "actionability"]
    )

    judged = judged_under(default)
    assert judged.status == PARSE_OK and list(json.loads(judged.raw)) == list(DEFAULT_RUBRIC_METRICS)
    assert "metrics" not in simulated_judge[-1]  # the default five are implied: earlier requests keep their hash
    for rubric in (six, three):
        judged = judged_under(rubric)
        assert judged.status == PARSE_OK and judged.asks == 1, judged.problem
        assert list(json.loads(judged.raw)) == list(rubric.judge_metrics)  # its metrics, in its order, no other
        assert judged.scores[SIXTH] in rubric_metrics.REGISTRY[SIXTH].allowed_values
    # The draw for a metric with no phrase bank is seeded: the same turn scores the same.
    assert judged_under(three).scores == judged.scores


@pytest.mark.django_db
def test_the_rubric_page_sets_a_versions_metrics_from_the_registry(researcher_client, sixth_metric):
    judge = default_template(JUDGE_RUBRIC)
    url = reverse("audits:prompt-template-revise", args=[judge.pk])
    page = researcher_client.get(url).content.decode()
    assert f'value="{SIXTH}"' in page  # the registry's metrics are offered, the new one among them

    body = {"text": judge.text, "description": judge.description, "metrics": [*DEFAULT_RUBRIC_METRICS, SIXTH]}
    assert researcher_client.post(url, body).status_code == 302
    newest = PromptTemplate.objects.filter(kind=JUDGE_RUBRIC, name=judge.name).order_by("-version").first()
    assert newest.version == judge.version + 1 and newest.judge_metrics == (*DEFAULT_RUBRIC_METRICS, SIXTH)
    detail = researcher_client.get(reverse("audits:prompt-template-detail", args=[newest.pk])).content.decode()
    assert f'<p id="rubric-metrics">Metrics the judge is asked for: {", ".join(newest.judge_metrics)}</p>' in detail

    refused = researcher_client.post(url, {**body, "metrics": ["not_registered"]})
    assert (
        refused.status_code == 200 and "not_registered is not one of the available choices" in refused.content.decode()
    )
    unchanged = researcher_client.post(
        reverse("audits:prompt-template-revise", args=[newest.pk]),
        {"text": newest.text, "description": newest.description, "metrics": list(newest.judge_metrics)},
    )
    assert unchanged.status_code == 200 and "Nothing changed" in unchanged.content.decode()

    form = PromptTemplateCreateForm(
        {"kind": "reveal_check", "name": "strict", "text": "${answer} in ${tutor_turn}?", "metrics": [SIXTH]}
    )
    assert not form.is_valid() and form.errors["metrics"] == ["only a judge rubric names metrics"]


@pytest.mark.django_db
def test_an_audits_analysis_and_results_page_follow_its_rubric_versions_metrics(researcher_client, sixth_metric):
    audit = scored_audit("sixth results", tutors=1, questions=16, dimensions=("first_language",), tutor_turns=1)
    old = audit.judge_template
    new = prompt_template_revise(template=old, text=old.text, metrics=[*old.metrics, SIXTH])
    scores = TurnScore.objects.filter(turn__dialogue__audit=audit, rubric=old)
    TurnScore.objects.bulk_create(
        [
            TurnScore(
                turn_id=s.turn_id,
                dialogue_id=s.dialogue_id,
                audit_id=s.audit_id,
                metric=s.metric,
                value=s.value,
                rubric=new,
            )
            for s in scores
        ]
        + [
            TurnScore(
                turn_id=s.turn_id,
                dialogue_id=s.dialogue_id,
                audit_id=s.audit_id,
                metric=SIXTH,
                value=s.value,
                rubric=new,
            )
            for s in scores.filter(metric="actionability")
        ]
    )
    type(audit).objects.filter(pk=audit.pk).update(judge_template=new)
    audit.refresh_from_db()

    analysis = audit_analysis(audit=audit, parameters=AnalysisParameters(n_boot=50))
    assert analysis.pedagogical.metrics == (*DEFAULT_RUBRIC_METRICS, SIXTH)
    sixth_rows = [row for row in analysis.pedagogical.rows if row.metric == SIXTH]
    actionability = [row for row in analysis.pedagogical.rows if row.metric == "actionability"]
    assert sixth_rows and [row.r for row in sixth_rows] == [row.r for row in actionability]  # the same scores
    assert {cell.group for cell in analysis.metric_by_tutor()} == {*DEFAULT_RUBRIC_METRICS, SIXTH}
    assert analysis.summary_rows(
        tutor=sixth_rows[0].tutor, domain=sixth_rows[0].domain, kind="explicit", family="within", group=SIXTH
    ) == [r for r in sixth_rows if r.family == "within"]

    page = researcher_client.get(reverse("audits:results", args=[audit.pk]) + "?n_boot=50").content.decode()
    assert SIXTH in page
    row = sixth_rows[0]
    cell = {
        name: getattr(row, name) for name in ("tutor", "domain", "kind", "family", "dimension", "level_a", "level_b")
    }
    pairs = researcher_client.get(
        reverse("audits:results-pairs", args=[audit.pk]), {**cell, "metric": SIXTH, "n_boot": 50}
    )
    assert pairs.status_code == 200 and pairs.context["metric_is_turn_level"]
    assert pairs.context["n_complete"] == row.n  # the pairs behind the row, over the rubric's metrics
