"""The three validity layers per metric (pure): the human ceiling (α with its interval, each annotator against the
others), the judge against the humans (κ, AC1/AC2 with intervals, the κ-paradox warning, the alt-test at a chosen
ε, judges ranked by ρ) and the judge's direction (mean judge − human per stratum, tutors' Kendall τ); the CSV
export's alt-test columns per annotator."""

import io

import pandas as pd
import pytest

from annotation.agreement import krippendorff_alpha
from annotation.alt_test import alt_test
from annotation.gwet import gwet_ac
from annotation.judge_validation import report, validity
from annotation.judge_validation.rubric import SCALE
from annotation.selectors import exports

from .test_judge_validation_verdict_rule import dataset, judges_for


@pytest.fixture(scope="module")
def layers():
    rng, humans, consensus = dataset(1)
    labels = report.MetricLabels(metric="actionability", scale=SCALE, human_pre=humans, consensus=consensus)
    judges = judges_for(rng, humans, consensus)
    row = report.metric_report(labels, judges, report.Thresholds())
    kappas = {key: section["kappa_linear"] for key, section in row["judges"].items()}
    strata = {i: {"tutor": f"tutor {i % 4}", "condition": f"condition {i % 2}"} for i in consensus}
    found = validity.metric_layers(labels, judges, kappas, strata=strata, epsilon=0.2)
    return humans, consensus, judges, row, found


def test_the_human_ceiling_states_alpha_with_its_interval_and_each_annotator_against_the_others(layers):
    humans, _, _, row, found = layers
    alpha = found["human_ceiling"]["human_alpha"]
    assert alpha["estimate"] == pytest.approx(row["human_alpha_pre"]["value"], abs=1e-12)
    assert alpha["low"] < alpha["estimate"] < alpha["high"]
    assert alpha["units"]["items_pairable"] == 180 and set(alpha["p_below"]) == {0.667, 0.8}
    per = {a["annotator"]: a for a in found["human_ceiling"]["per_annotator"]}
    assert set(per) == {1, 2, 3}
    without_one = [[humans[i][a] for i in sorted(humans)] for a in (2, 3)]
    expected = krippendorff_alpha(without_one, "ordinal", value_domain=list(SCALE)).value
    assert per[1]["alpha_without"]["value"] == pytest.approx(expected, abs=1e-12)
    assert 0.5 < per[1]["kappa_vs_others"]["value"] <= 1 and per[1]["n_items"] > 150


def test_the_judge_against_the_humans_ac1_paradox_warning_and_alt_test(layers):
    humans, consensus, judges, _, found = layers
    constant = found["judges"]["constant"]["judge_vs_humans"]
    ratings = [[judges["constant"][i], consensus[i]] for i in sorted(consensus)]
    assert constant["ac1"]["estimate"] == pytest.approx(gwet_ac(ratings, list(SCALE)).value, abs=1e-12)
    assert constant["kappa_unweighted"]["value"] == pytest.approx(0.0)
    assert "κ paradox" in constant["prevalence_warning"]  # κ 0 against a high AC1 at 84 % of one class
    assert constant["class_shares"]["0"] > 0.8
    copy = found["judges"]["copy"]["judge_vs_humans"]
    assert copy["prevalence_warning"] == "" and copy["ac1"]["low"] <= copy["ac1"]["estimate"] <= copy["ac1"]["high"]
    by_annotator = {str(a): {i: humans[i][a] for i in humans} for a in (1, 2, 3)}
    expected = alt_test(by_annotator, judges["random"], epsilon=0.2)
    random = found["judges"]["random"]["judge_vs_humans"]["alt_test"]
    assert (random["omega"], random["rho"], random["passed"]) == (expected.omega, expected.rho, False)
    assert random["epsilon_text"].startswith("ε = 0.20 (expert")
    ranked = [row["judge"] for row in found["judges_by_rho"]]
    assert ranked[0] == "copy" and ranked[-1] == "random"


def test_the_judges_direction_per_stratum_and_the_tutors_rank_agreement(layers):
    _, consensus, judges, _, found = layers
    way = found["judges"]["ninety"]["direction"]
    differences = [float(judges["ninety"][i]) - float(consensus[i]) for i in consensus]
    assert way["mean_difference"]["estimate"] == pytest.approx(sum(differences) / len(differences))
    assert {r["stratum"] for r in way["by_stratum"]["tutor"]} == {f"tutor {t}" for t in range(4)}
    assert sum(r["n"] for r in way["by_stratum"]["condition"]) == 180
    assert way["rank_agreement"]["tutor"]["n_groups"] == 4
    assert way["rank_agreement"]["condition"]["estimate"] is None  # two conditions: τ needs three
    copy = found["judges"]["copy"]["direction"]["rank_agreement"]["tutor"]
    assert copy["low"] <= copy["estimate"] <= copy["high"]


def test_epsilon_is_validated_and_its_defaults_are_named():
    assert validity.epsilon_from(None) == validity.epsilon_from("") == 0.2
    assert validity.epsilon_from("0.1") == 0.1 and "crowd" in validity.epsilon_text(0.1)
    for wrong in ("0", "0.9", "x", "-0.1"):
        with pytest.raises(validity.EpsilonError):
            validity.epsilon_from(wrong)


def test_the_csv_export_carries_the_alt_tests_p_adjusted_per_annotator(layers):
    _, _, judges, row, found = layers
    body = {
        "project": {"id": 1},
        "rubric": {"label": "v 1"},
        "judges": [{"key": key, "name": key} for key in judges],
        "metrics": [{**row, "layers": found}],
    }
    text, content_type, name = exports.export_judge_validation(body, "csv")
    assert content_type.startswith("text/csv") and name.endswith(".csv")
    table = pd.read_csv(io.StringIO(text)).set_index("judge")
    assert len(table) == len(judges)  # still one row per metric and judge
    for key in judges:
        alt = found["judges"][key]["judge_vs_humans"]["alt_test"]
        assert len(alt["per_annotator"]) == 3
        for a in alt["per_annotator"]:
            prefix = f"alt_test_{a['annotator']}_"
            assert table.loc[key, prefix + "p_adjusted"] == pytest.approx(a["p_adjusted"], rel=1e-12)
            assert table.loc[key, prefix + "p_value"] == pytest.approx(a["p_value"], rel=1e-12)
            assert table.loc[key, prefix + "advantage"] == pytest.approx(a["advantage"], rel=1e-12)
            assert bool(table.loc[key, prefix + "rejected"]) is a["rejected"]
            assert table.loc[key, prefix + "n_items"] == a["n_items"]
        assert table.loc[key, "alt_test_omega"] == pytest.approx(alt["omega"])
