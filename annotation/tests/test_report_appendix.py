"""The Appendix-D report: its κ and α equal what statsmodels and the krippendorff package compute from the
same labels independently; the adjudication rate is in the paper's form ("2/6 = 33.3% no majority");
hours, spend and cost per final label follow from the recorded times and the pay rate; the HTML, Markdown
and JSON renderings (and `manage.py annotation_report`) carry the same numbers."""

import io
import json
import re
from decimal import Decimal

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation import report_sections, reports
from annotation.services.adjudication import adjudication_decide, discussion_answers_submit
from annotation.services.labelling import label_next, main_label_submit

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db

# Two annotators, six items (majority policy, overlap 2): items 1 and 4 have no majority.
FIRST = ["yes", "yes", "no", "yes", "no", "yes"]
SECOND = ["yes", "no", "no", "yes", "yes", "yes"]
SECONDS = (60.0, 120.0)


@pytest.fixture
def labelled(make_user, adjudicator):
    s = build_main_stage(items=6, overlap=2, policy="majority_reviewer", multi_turn_every=3, pay_rate="10.00")
    users = [make_user("annotator") for _ in range(2)]
    for user, values, seconds in zip(users, (FIRST, SECOND), SECONDS, strict=True):
        pass_gate(s.stage, user)
        for value in values:
            item = label_next(annotator=user, stage=s.stage).item
            main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers(s, value), seconds=seconds)
    for n in (1, 4):
        adjudication_decide(stage=s.stage, item=s.items[n], decisions={"q1": "no"}, note="Reviewed.", by=adjudicator)
    s.users = users
    return s


def independent_kappa_and_alpha(first, second):
    codes = {"yes": 0, "no": 1}
    units_by_raters = np.array([[codes[a], codes[b]] for a, b in zip(first, second, strict=True)])
    table, _ = aggregate_raters(units_by_raters)
    kappa = sm_fleiss_kappa(table, method="fleiss")
    alpha = krippendorff.alpha(reliability_data=units_by_raters.T.astype(float), level_of_measurement="nominal")
    return kappa, alpha


def test_agreement_equals_an_independent_computation(labelled):
    report = reports.project_report(labelled.project)
    kappa, alpha = independent_kappa_and_alpha(FIRST, SECOND)
    groups = report["stages"][0]["agreement"][0]["groups"]
    overall = groups[0]
    assert overall["group"] == "All items"
    # Full precision: the report's floats are not rounded (rounding is for display only).
    assert overall["pre"]["fleiss_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
    assert overall["pre"]["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-12)
    # Over all items each coefficient has its bootstrap interval (the same labels give the same interval) and units.
    for name, point in (("fleiss_kappa", kappa), ("krippendorff_alpha", alpha)):
        found = overall["pre"][name]
        assert found["low"] <= point <= found["high"] and found["confidence"] == 0.95
        assert found["units"]["items_pairable"] == found["n_units"]
        assert found["units"]["pairable_values"] >= 2 * found["n_units"]
    assert set(overall["pre"]["krippendorff_alpha"]["p_below"]) == {"0.667", "0.800"}
    # Gwet's AC1 by hand: agreement 4/6; "yes" is 8 of the 12 ratings, so chance = 2 · (2/3)(1/3) / (2 − 1) = 4/9;
    # AC1 = (2/3 − 4/9) / (1 − 4/9) = 0.4.
    ac1 = overall["pre"]["gwet_ac1"]
    assert ac1["value"] == pytest.approx(0.4, abs=1e-12)
    assert ac1["low"] <= ac1["value"] <= ac1["high"]
    assert "gwet_ac2_linear" not in overall["pre"]  # a nominal (yes/no) question: no AC2
    again = reports.project_report(labelled.project)["stages"][0]["agreement"][0]["groups"][0]
    assert again["pre"]["fleiss_kappa"]["low"] == overall["pre"]["fleiss_kappa"]["low"]
    # Per subject (items alternate maths, physics) and per modality (items 0 and 3 are multi-turn).
    by_group = {g["group"]: g for g in groups}
    maths = [0, 2, 4]
    k_maths, _ = independent_kappa_and_alpha([FIRST[i] for i in maths], [SECOND[i] for i in maths])
    assert by_group["maths"]["pre"]["fleiss_kappa"]["value"] == pytest.approx(k_maths, abs=1e-12)
    # Sub-group rows carry the same seeded bootstrap interval as the overall row.
    maths_kappa = by_group["maths"]["pre"]["fleiss_kappa"]
    assert maths_kappa["low"] <= k_maths <= maths_kappa["high"] and maths_kappa["n_boot"] > 0
    assert set(by_group["maths"]["pre"]["krippendorff_alpha"]["p_below"]) == {"0.667", "0.800"}
    multi = [0, 3]  # both unanimous "yes": one category only, so κ is undefined, not 1
    assert by_group["Multi-turn"]["pre"]["items"] == len(multi)
    assert by_group["Multi-turn"]["pre"]["fleiss_kappa"]["value"] is None
    assert by_group["Multi-turn"]["pre"]["fleiss_kappa"]["undefined_reason"]
    assert by_group["Multi-turn"]["pre"]["fleiss_kappa"]["low"] is None  # no interval on an undefined value
    # Each group names the subject or modality that selects its items, as the items and exports spell it.
    assert [(g["kind"], g["value"]) for g in groups] == [
        ("all", ""),
        ("subject", "maths"),
        ("subject", "physics"),
        ("modality", "single"),
        ("modality", "multi"),
    ]


def test_adjudication_rate_distribution_and_annotators(labelled):
    stage = reports.project_report(labelled.project)["stages"][0]
    assert stage["adjudication"]["headline"] == "2/6 = 33.3% no majority"
    assert stage["adjudication"]["by_method"] == {"unanimous": 4, "majority": 0, "discussion": 0, "senior": 2}
    finals = ["yes", "no", "no", "yes", "no", "yes"]
    counts = {v["value"]: v["count"] for v in stage["distribution"][0]["values"]}
    assert counts == {"yes": finals.count("yes"), "no": finals.count("no")}
    agreement = {a["compared"]: a["agreement"] for a in stage["annotators"]}
    first = sum(a == f for a, f in zip(FIRST, finals, strict=True)) / 6
    second = sum(a == f for a, f in zip(SECOND, finals, strict=True)) / 6
    assert sorted(a["agreement"] for a in stage["annotators"]) == sorted([first, second])  # exact, not rounded
    assert set(agreement) == {6}
    assert stage["volume"]["by_phase"]["main"] == 12


def test_hours_spend_and_cost_per_final_label(labelled):
    report = reports.project_report(labelled.project)
    cost = report["stages"][0]["time_and_cost"]
    seconds = 6 * SECONDS[0] + 6 * SECONDS[1]
    assert cost["hours"] == pytest.approx(seconds / 3600, abs=1e-12)
    spend = (Decimal("10.00") * Decimal(str(seconds / 3600))).quantize(Decimal("0.01"))
    assert Decimal(cost["spend"]) == spend == Decimal("3.00")
    assert cost["final_labels"] == 6
    assert Decimal(cost["cost_per_final_label"]) == Decimal("0.5000")
    # Each item took 1 min from one annotator and 2 min from the other: the median is 1.5 either way.
    assert cost["median_minutes_per_item"] == {"Single turn": 1.5, "Multi-turn": 1.5}
    assert report["totals"]["spend"] == "3.00"


def test_the_three_formats_and_the_command_agree(labelled, researcher_client):
    report = reports.project_report(labelled.project)
    kappa_text = report_sections.fmt(report["stages"][0]["agreement"][0]["groups"][0]["pre"]["fleiss_kappa"]["value"])
    markdown = reports.report_markdown(report)
    html = reports.report_html(report)
    for body in (markdown, html):
        assert kappa_text in body
        assert "2/6 = 33.3% no majority" in body
        assert "Workforce and pay" in body and "Hours and spend" in body and "Cross-stage conflicts" in body
    out = io.StringIO()
    call_command("annotation_report", labelled.project.pk, "--format", "json", stdout=out)
    from_command = json.loads(out.getvalue())
    assert from_command["stages"][0]["adjudication"]["headline"] == "2/6 = 33.3% no majority"
    page = researcher_client.get(reverse("annotation:report", args=[labelled.project.pk]))
    assert page.status_code == 200 and kappa_text in page.content.decode()
    # Pages give the time to the minute in the site's zone; the JSON keeps ISO 8601.
    assert re.search(r"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", page.content.decode())
    assert not re.search(r"Generated \d{4}-\d\d-\d\dT", page.content.decode())
    for fmt in ("html", "md", "json"):
        download = researcher_client.get(reverse("annotation:report-download", args=[labelled.project.pk, fmt]))
        assert download.status_code == 200 and "33.3% no majority" in download.content.decode()
    api = researcher_client.get(reverse("annotation-report", args=[labelled.project.pk]))
    assert api.json()["stages"][0]["adjudication"]["headline"] == "2/6 = 33.3% no majority"
    assert "T" in api.json()["generated_at"]


def test_only_researchers_read_the_report(labelled, client, make_user):
    client.force_login(labelled.users[0])
    assert client.get(reverse("annotation:report", args=[labelled.project.pk])).status_code == 403
    assert client.get(reverse("annotation-report", args=[labelled.project.pk])).status_code == 403


def test_post_discussion_agreement_is_reported_beside_the_first_answers(make_user):
    s = build_main_stage(items=2, overlap=2, policy="discussion_senior")
    users = [make_user("annotator") for _ in range(2)]
    for user, values in zip(users, (["yes", "yes"], ["no", "yes"]), strict=True):
        pass_gate(s.stage, user)
        for value in values:
            item = label_next(annotator=user, stage=s.stage).item
            main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers(s, value), seconds=10)
    # Item 0 is discussed; the second annotator comes round to "yes".
    for user in users:
        discussion_answers_submit(stage=s.stage, item=s.items[0], annotator=user, answers=answers(s, "yes"))
    question = reports.project_report(s.project)["stages"][0]["agreement"][0]
    assert question["has_post_discussion"] is True
    overall = question["groups"][0]
    pre_kappa, _ = independent_kappa_and_alpha(["yes", "yes"], ["no", "yes"])
    assert overall["pre"]["fleiss_kappa"]["value"] == pytest.approx(pre_kappa, abs=1e-4)
    assert overall["post"]["fleiss_kappa"]["value"] is None  # all "yes" after discussion: undefined
    headline = reports.project_report(s.project)["stages"][0]["adjudication"]["headline"]
    assert headline.startswith("1/2 = 50.0% needed discussion")
