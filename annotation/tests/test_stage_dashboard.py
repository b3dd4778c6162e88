"""The live stage dashboard: item counts, labels per annotator with median seconds, reservations held,
disagreement and adjudication rates, and running Fleiss κ / Krippendorff α that equal `annotation.agreement`
on the same pre-discussion labels (to 1e-12) — through the selector, the API (full-precision floats) and
the page, which polls for its body while the stage runs and stops once every item is complete; an ordinal
question's AC2 (linear weights) beside AC1 equals a hand computation, and a nominal one has none."""

import pytest
from django.urls import reverse

from annotation.agreement import fleiss_kappa, krippendorff_alpha
from annotation.models import Assignment, LabelQuestion, MainItem
from annotation.selectors.stage_dashboard import stage_dashboard
from annotation.services.labelling import label_next, label_revise, main_label_submit

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db

# Per item, the three annotators' first answers (None: not labelled yet).
PLAN = [
    ("yes", "yes", "yes"),
    ("yes", "no", "no"),
    ("no", "yes", "yes"),
    ("no", "no", "no"),
    ("yes", "no", None),
]


def _run(make_user):
    s = build_main_stage(items=len(PLAN) + 1, overlap=3, policy="majority_reviewer")
    s.users = [make_user("annotator") for _ in range(3)]
    for user in s.users:
        pass_gate(s.stage, user)
    for n, row in enumerate(PLAN):
        for who, value in enumerate(row):
            if value is None:
                continue
            assignment = label_next(annotator=s.users[who], stage=s.stage)
            assert assignment.item_id == s.items[n].pk
            main_label_submit(
                annotator=s.users[who],
                stage=s.stage,
                item=assignment.item,
                answers=answers(s, value),
                seconds=10 * (n + 1),
            )
    label_next(annotator=s.users[2], stage=s.stage)  # a reservation held on the last labelled item
    return s


def _expected(s, plan):
    rows = [[v for v in row if v is not None] for row in plan]
    width = max(len(r) for r in rows)
    matrix = [r + [None] * (width - len(r)) for r in rows]
    transposed = [list(c) for c in zip(*matrix, strict=True)]
    return fleiss_kappa(matrix).value, krippendorff_alpha(transposed, "nominal").value


def test_dashboard_counts_and_agreement_equal_the_agreement_module(make_user):
    s = _run(make_user)
    dash = stage_dashboard(s.stage)
    assert dash["items"] == {"total": 6, "complete": 4, "in_progress": 1, "waiting": 1}
    assert dash["labels"] == 14
    assert dash["reservations_held"] == 1
    kappa, alpha = _expected(s, PLAN)
    row = dash["agreement"][0]
    assert row["fleiss_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
    assert row["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-12)
    for name, point in (("fleiss_kappa", kappa), ("krippendorff_alpha", alpha)):
        assert row[name]["low"] <= point <= row[name]["high"] and row[name]["n_boot"] > 0
        assert row[name]["units"]["items_pairable"] == row[name]["n_units"]
    assert row["gwet_ac1"]["low"] <= row["gwet_ac1"]["value"] <= row["gwet_ac1"]["high"]
    assert row["items"] == 5
    assert dash["disagreement_rate"] == 2 / 4  # items 2 and 3: majority, not unanimous
    assert dash["adjudication_rate"] == 0.0
    medians = sorted(a["median_seconds"] for a in dash["annotators"])
    assert medians == [25.0, 30.0, 30.0]  # (10, 20, 30, 40[, 50]) per annotator
    assert [a["labels"] for a in dash["annotators"]] == [5, 5, 4]

    # A revision before the item settles is what the running statistics read (final pre-discussion labels).
    label_revise(annotator=s.users[1], stage=s.stage, item=s.items[4], answers=answers(s, "yes"))
    revised_plan = [*PLAN[:4], ("yes", "yes", None)]
    kappa, alpha = _expected(s, revised_plan)
    after = stage_dashboard(s.stage)
    assert after["agreement"][0]["fleiss_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
    assert after["agreement"][0]["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-12)
    assert after["revised_labels"] == 1


def test_dashboard_api_page_and_polling(make_user, researcher_client):
    s = _run(make_user)
    api = researcher_client.get(reverse("annotation-main-dashboard", args=[s.stage.pk]))
    assert api.status_code == 200
    kappa, alpha = _expected(s, PLAN)
    assert api.json()["agreement"][0]["fleiss_kappa"]["value"] == kappa  # the exact float, not a rounded one
    assert api.json()["agreement"][0]["krippendorff_alpha"]["value"] == alpha

    page = researcher_client.get(reverse("annotation:stage-dashboard", args=[s.stage.pk])).content.decode()
    live_url = reverse("annotation:stage-dashboard-live", args=[s.stage.pk])
    assert f'hx-get="{live_url}"' in page and 'hx-trigger="every 5s"' in page
    assert "vendor/htmx.min.js" in page
    assert f"{kappa:.3f}" in page
    # κ and α each state their own three counts (5 items, all with ≥ 2 ratings, 14 ratings in them).
    counts = "5 items rated, 5 with ≥ 2 ratings, 14 pairable values"
    assert f"data-kappa-units>{counts}<" in page and f"data-alpha-units>{counts}<" in page
    for link in (
        reverse("annotation:report", args=[s.project.pk]),
        reverse("annotation:conflicts", args=[s.project.pk]),
        reverse("annotation:labels-export", args=[s.project.pk, "csv"]),
    ):
        assert link in page
    body = researcher_client.get(live_url).content.decode()
    assert 'id="stage-dashboard"' in body and "<html" not in body  # the fragment alone, for the swap

    # Linked from the project and stage pages.
    dashboard_url = reverse("annotation:stage-dashboard", args=[s.stage.pk])
    assert dashboard_url in researcher_client.get(reverse("annotation:project", args=[s.project.pk])).content.decode()
    stage_page = researcher_client.get(reverse("annotation:stage", args=[s.stage.pk])).content.decode()
    assert dashboard_url in stage_page and reverse("annotation:report", args=[s.project.pk]) in stage_page

    # Once every item is complete and nothing is reserved, the body stops polling.
    MainItem.objects.filter(stage=s.stage).update(status=MainItem.Status.RESOLVED)
    Assignment.objects.filter(stage=s.stage, submitted_at__isnull=True).delete()
    assert "hx-trigger" not in researcher_client.get(live_url).content.decode()


def test_dashboard_is_for_researchers(make_user, annotator_client):
    s = build_main_stage(items=1, overlap=2)
    assert annotator_client.get(reverse("annotation-main-dashboard", args=[s.stage.pk])).status_code == 403
    assert annotator_client.get(reverse("annotation:stage-dashboard", args=[s.stage.pk])).status_code == 403


def test_rates_count_items_sent_to_a_reviewer_and_queries_do_not_grow(make_user, django_assert_max_num_queries):
    s = build_main_stage(items=3, overlap=2, policy="majority_reviewer")
    users = [make_user("annotator") for _ in range(2)]
    for user in users:
        pass_gate(s.stage, user)
    for values in (("yes", "no"), ("yes", "yes")):  # the first item: no majority, to the reviewer
        for user, value in zip(users, values, strict=True):
            item = label_next(annotator=user, stage=s.stage).item
            main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers(s, value))
    with django_assert_max_num_queries(9):  # the same for 3 items or 3,000
        dash = stage_dashboard(s.stage)
    assert dash["statuses"]["reviewer_queue"] == 1 and dash["in_queue"] == 1
    assert dash["disagreement_rate"] == 1 / 2
    assert dash["adjudication_rate"] == 1 / 2
    assert dash["items"] == {"total": 3, "complete": 2, "in_progress": 0, "waiting": 1}


# An ordinal 0–2 question: three annotators' first answers on five items (None: not labelled).
ORDINAL_PLAN = [("0", "0", "0"), ("0", "1", "1"), ("2", "2", "2"), ("1", "1", "2"), ("0", "2", None)]


def test_an_ordinal_question_shows_ac2_with_linear_weights_beside_ac1_a_nominal_one_none(make_user, researcher_client):
    s = build_main_stage(items=len(ORDINAL_PLAN), overlap=3, policy="majority_reviewer")
    LabelQuestion.objects.filter(pk=s.questions[0].pk).update(
        level=LabelQuestion.Level.ORDINAL,
        choices=[{"value": v, "label": v} for v in ("0", "1", "2")],
        justification_required_for=[],
        positive_values=["2"],
    )
    users = [make_user("annotator") for _ in range(3)]
    for user in users:
        pass_gate(s.stage, user)
    for n, row in enumerate(ORDINAL_PLAN):
        for who, value in enumerate(row):
            if value is not None:
                assignment = label_next(annotator=users[who], stage=s.stage)
                assert assignment.item_id == s.items[n].pk
                main_label_submit(
                    annotator=users[who], stage=s.stage, item=assignment.item, answers=answers(s, value), seconds=10
                )
    # Gwet's AC2 by hand, linear weights w(0,1) = w(1,2) = ½, w(0,2) = 0 (irrCAC's linear.weights):
    # per item Σ_k r_k (r*_k − 1) / (r (r − 1)) with r*_k = Σ_l w_kl r_l: 1, 2/3, 1, 2/3, 0, so p_a = 2/3;
    # the class shares averaged over items are 11/30, 8/30, 11/30 and Σ w = 5, so
    # p_e = 5 / (3 · 2) · (2 · (11/30)(19/30) + (8/30)(22/30)) = 0.55; AC2 = (2/3 − 0.55) / 0.45 = 7/27.
    [row] = stage_dashboard(s.stage)["agreement"]
    ac2 = row["gwet_ac2_linear"]
    assert ac2["value"] == pytest.approx(7 / 27, abs=1e-12)
    assert ac2["low"] <= ac2["value"] <= ac2["high"] and ac2["n_boot"] > 0
    assert ac2["units"] == {"items_rated": 5, "items_pairable": 5, "pairable_values": 14}
    # Unweighted AC1 on the same labels: p_a = (1 + 1/3 + 1 + 1/3 + 0) / 5 = 8/15, p_e = ½ · 594/900 = 0.33.
    assert row["gwet_ac1"]["value"] == pytest.approx((8 / 15 - 0.33) / 0.67, abs=1e-12)
    api = researcher_client.get(reverse("annotation-main-dashboard", args=[s.stage.pk])).json()
    assert api["agreement"][0]["gwet_ac2_linear"]["value"] == ac2["value"]
    page = researcher_client.get(reverse("annotation:stage-dashboard", args=[s.stage.pk])).content.decode()
    assert f'<td class="num" data-ac2>{ac2["value"]:.3f} <span class="muted">({ac2["low"]:.3f} to' in page

    # A nominal question (the default yes/no one) shows no AC2.
    nominal = _run(make_user)
    [nominal_row] = stage_dashboard(nominal.stage)["agreement"]
    assert nominal_row["gwet_ac2_linear"] is None
    api = researcher_client.get(reverse("annotation-main-dashboard", args=[nominal.stage.pk])).json()
    assert api["agreement"][0]["gwet_ac2_linear"] is None
    page = researcher_client.get(reverse("annotation:stage-dashboard", args=[nominal.stage.pk])).content.decode()
    assert 'data-ac2><span class="muted" title="a nominal question' in page
