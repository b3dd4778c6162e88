"""Every door (the results page's form, the API's serializer, audit_report's options) offers the parameters of the
spec, with its defaults, bounds and choices; the statistics' keyword defaults are the spec's. No database."""

import inspect
from dataclasses import fields

import numpy as np
import pytest
from django.core.management.base import BaseCommand, CommandError

from audits import fairness
from audits.analysis_parameters import ANALYSIS_DEFAULTS, AnalysisParameters, door_parameters
from audits.api.serializers_results import AnalysisParametersSerializer
from audits.management.commands.audit_report import Command as AuditReport
from audits.views.results_pages import PARAMETER_FIELDS, AnalysisParametersForm
from audits.violation_rules import DEFAULT_THRESHOLD

DOOR = {parameter.name: parameter for parameter in door_parameters()}
NUMERIC = [name for name, parameter in DOOR.items() if not parameter.spec.choices]


@pytest.fixture(scope="module")
def parser():
    return AuditReport().create_parser("manage.py", "audit_report")


def _command_options(parser) -> set[str]:
    django_options = {action.dest for action in BaseCommand().create_parser("manage.py", "x")._actions}
    return {action.dest for action in parser._actions} - django_options - {"audit_id", "out"}


def _command(parser, *args: str):
    return parser.parse_args(["1", "--out", "folder", *args])


def test_every_door_offers_the_same_parameters(parser):
    assert set(DOOR) == {f.name for f in fields(AnalysisParameters)}  # every parameter, at every door
    assert {"r_denominator", "confidence", "round_decimals"} <= set(DOOR)
    assert set(AnalysisParametersForm.base_fields) == set(DOOR)
    assert set(AnalysisParametersSerializer().fields) == set(DOOR)
    assert _command_options(parser) == set(DOOR)
    assert set(PARAMETER_FIELDS) == set(DOOR)  # the page's links keep every parameter


def test_every_door_defaults_to_the_spec(parser):
    serializer_fields = AnalysisParametersSerializer().fields
    options = vars(_command(parser))
    for name in DOOR:
        default = getattr(ANALYSIS_DEFAULTS, name)
        assert AnalysisParametersForm.base_fields[name].initial == default, name
        assert serializer_fields[name].default == default, name
        assert options[name] == default, name
    assert ANALYSIS_DEFAULTS.threshold == DEFAULT_THRESHOLD  # changed in audits.violation_rules only


def test_an_empty_query_is_the_default_analysis_at_every_door(parser):
    assert AnalysisParametersForm.from_query({}).parameters() == ANALYSIS_DEFAULTS
    serializer = AnalysisParametersSerializer(data={})
    assert serializer.is_valid(), serializer.errors
    assert AnalysisParameters(**serializer.validated_data) == ANALYSIS_DEFAULTS
    assert AnalysisParameters(**{name: getattr(_command(parser), name) for name in DOOR}) == ANALYSIS_DEFAULTS


@pytest.mark.parametrize(
    "query",
    [
        {"alpha": "0.01", "fdr_q": "0.1", "rule": "paper"},
        {"r_denominator": "nonzero", "confidence": "0.9", "round_decimals": "6"},  # offered by no door before
    ],
)
def test_every_door_takes_the_same_values(parser, query):
    expected = {name: DOOR[name].kind(value) for name, value in query.items()}
    page = AnalysisParametersForm.from_query(query).parameters()
    serializer = AnalysisParametersSerializer(data=query)
    assert serializer.is_valid(), serializer.errors
    api = AnalysisParameters(**serializer.validated_data)
    options = _command(parser, *(part for name, value in query.items() for part in (_option(name), value)))
    command = AnalysisParameters(**{name: getattr(options, name) for name in DOOR})
    for parameters in (page, api, command):
        assert {name: getattr(parameters, name) for name in query} == expected
    assert page == api == command == ANALYSIS_DEFAULTS.replaced(**expected)


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_every_door_has_the_spec_choices(parser):
    actions = {action.dest: action for action in parser._actions}
    for name, parameter in DOOR.items():
        if not parameter.spec.choices:
            continue
        values = list(parameter.choice_values)
        assert [value for value, _ in AnalysisParametersForm.base_fields[name].choices] == values, name
        assert list(AnalysisParametersSerializer().fields[name].choices) == values, name
        assert list(actions[name].choices) == values, name


@pytest.mark.parametrize("name", NUMERIC)
def test_every_door_refuses_the_same_out_of_bounds_values(parser, name):
    spec = DOOR[name].spec
    for value, inside in (
        (spec.minimum, True),
        (spec.maximum, True),
        (spec.minimum - 1, False),
        (spec.maximum + 1, False),
    ):
        text = str(DOOR[name].kind(value))
        assert AnalysisParametersForm({**_defaults(), name: text}).is_valid() is inside, (name, text)
        assert AnalysisParametersSerializer(data={name: text}).is_valid() is inside, (name, text)
        if inside:
            assert getattr(_command(parser, _option(name), text), name) == DOOR[name].kind(text)
        else:
            with pytest.raises(CommandError):
                _command(parser, _option(name), text)


def _defaults() -> dict:
    return {name: getattr(ANALYSIS_DEFAULTS, name) for name in DOOR}


@pytest.mark.parametrize(
    "function", [fairness.paired_effect, fairness.contrast_table, fairness._contrast_tables, fairness.analyze]
)
def test_the_statistics_take_the_parameters_not_keyword_defaults(function):
    signature = inspect.signature(function).parameters
    assert signature["parameters"].default is ANALYSIS_DEFAULTS
    assert not {f.name for f in fields(AnalysisParameters)} & set(signature)  # no default written twice


def test_the_parameters_reach_the_statistics_as_their_keywords_do():
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 3, 40).astype(float), rng.integers(0, 3, 40).astype(float)
    parameters = AnalysisParameters(n_boot=200, seed=7, r_denominator="nonzero", confidence=0.9, round_decimals=6)
    by_keywords = fairness.paired_effect(
        a, b, n_boot=200, seed=7, r_denominator="nonzero", confidence=0.9, round_decimals=6
    )
    assert fairness.paired_effect(a, b, parameters) == by_keywords
    assert fairness.paired_effect(a, b, parameters, confidence=0.95) != by_keywords  # a keyword overrides
    with pytest.raises(TypeError):
        fairness.paired_effect(a, b, parameters, treshold=0.2)
