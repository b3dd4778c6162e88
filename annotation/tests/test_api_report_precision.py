"""The JSON report over the API carries exact floats: every κ, α, share, per-annotator agreement and pass
rate equals what `annotation.agreement` (or plain arithmetic) gives on the same labels to 1e-12, while
the HTML and Markdown versions round for display."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.agreement import fleiss_kappa, gold_agreement, krippendorff_alpha
from annotation.models import Enrollment
from annotation.services.labelling import label_next, main_label_submit

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db

# Three annotators, seven items, majority policy: values chosen so that no statistic is a short decimal.
PLAN = [
    ("yes", "yes", "no"),
    ("yes", "no", "no"),
    ("no", "no", "no"),
    ("yes", "yes", "yes"),
    ("no", "yes", "yes"),
    ("yes", "yes", "no"),
    ("no", "no", "yes"),
]
SECONDS = (61.0, 97.0, 113.0)


def test_report_json_statistics_equal_the_agreement_module(make_user, researcher_client):
    s = build_main_stage(items=len(PLAN), overlap=3, policy="majority_reviewer")
    users = [make_user("annotator") for _ in range(3)]
    for user in users:
        pass_gate(s.stage, user)
    failed = make_user("annotator")
    Enrollment.objects.create(stage=s.stage, user=failed, subject="maths", gate_passed=False, status="failed")
    for n in range(len(PLAN)):
        for who, user in enumerate(users):
            item = label_next(annotator=user, stage=s.stage).item
            assert item.pk == s.items[n].pk
            main_label_submit(
                annotator=user, stage=s.stage, item=item, answers=answers(s, PLAN[n][who]), seconds=SECONDS[who]
            )

    report = researcher_client.get(reverse("annotation-report", args=[s.project.pk])).json()
    stage = report["stages"][0]
    pre = stage["agreement"][0]["groups"][0]["pre"]
    transposed = [list(column) for column in zip(*PLAN, strict=True)]
    kappa = fleiss_kappa([list(row) for row in PLAN]).value
    alpha = krippendorff_alpha(transposed, "nominal").value
    assert round(kappa, 4) != kappa and round(alpha, 4) != alpha  # the check would see a rounding
    assert pre["fleiss_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
    assert pre["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-12)

    finals = ["yes", "no", "no", "yes", "yes", "yes", "no"]  # the majority of each row
    expected_agreement = sorted(
        gold_agreement([row[who] for row in PLAN], finals, unsure="strict").value for who in range(3)
    )
    assert sorted(a["agreement"] for a in stage["annotators"]) == pytest.approx(expected_agreement, abs=1e-12)
    shares = {v["value"]: v["share"] for v in stage["distribution"][0]["values"]}
    assert shares == pytest.approx({"yes": 4 / 7, "no": 3 / 7}, abs=1e-12)
    assert report["gate"][0]["pass_rate"] == pytest.approx(3 / 4, abs=1e-12)
    hours = len(PLAN) * sum(SECONDS) / 3600
    assert stage["time_and_cost"]["hours"] == pytest.approx(hours, abs=1e-12)
    assert round(hours, 2) != hours
    # Money: the spend is what is paid, to the cent; the cost per final label is exact from it.
    spend = Decimal(stage["time_and_cost"]["spend"])
    assert spend == (Decimal("10.00") * Decimal(str(hours))).quantize(Decimal("0.01"))
    cost = Decimal(stage["time_and_cost"]["cost_per_final_label"])
    assert abs(cost - spend / 7) < Decimal("1e-12") and cost != cost.quantize(Decimal("0.0001"))

    # Display rounds: three decimals for statistics, two for hours.
    markdown = researcher_client.get(reverse("annotation:report-download", args=[s.project.pk, "md"])).content.decode()
    assert f"{kappa:.3f}" in markdown and repr(kappa) not in markdown
    assert f"{hours:.2f}" in markdown
    assert str(cost.quantize(Decimal("0.0001"))) in markdown and str(cost) not in markdown
    page = researcher_client.get(reverse("annotation:report", args=[s.project.pk])).content.decode()
    assert f"{kappa:.3f}" in page and repr(kappa) not in page
