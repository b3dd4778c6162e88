"""Aggregation by annotator quality on a project's own labels, through its doors: the stage's API endpoint, the
report (JSON and page) and the soft-label exports, read back by pandas and pyarrow as they are.

Three annotators label eight items (majority policy, overlap 3): A01 and A02 give the planted values (A02 is Unsure on
the last item), A03 always the other value. The majority settles seven items; the last has no majority. Four items have
gold labels (the planted values)."""

import io
from collections import Counter

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.urls import reverse

from annotation.crowd_aggregation import METHOD_KEYS
from annotation.models import GoldLabel
from annotation.services.labelling import label_next, main_label_submit
from annotation.workflow.answers import Answer

from .main_setup import build_main_stage, pass_gate

pytestmark = pytest.mark.django_db

PLANTED = ["yes", "no", "yes", "yes", "no", "yes", "no", "no"]
OTHER = {"yes": "no", "no": "yes"}


@pytest.fixture
def labelled(make_user):
    s = build_main_stage(items=8, overlap=3, policy="majority_reviewer", unsure=True)
    users = [make_user("annotator", username=f"real-name-{n}") for n in range(3)]
    for user in users:
        pass_gate(s.stage, user)
    planted = {item.pk: value for item, value in zip(s.items, PLANTED, strict=True)}
    for who, user in enumerate(users):
        for _ in s.items:
            item = label_next(annotator=user, stage=s.stage).item
            value = planted[item.pk] if who < 2 else OTHER[planted[item.pk]]
            if who == 1 and item.pk == s.items[-1].pk:
                answer = Answer(unsure=True)
            else:
                answer = Answer(value=value, justification="because …" if value == "no" else "")
            main_label_submit(annotator=user, stage=s.stage, item=item, answers={"q1": answer}, seconds=30)
    for item in s.items[:4]:
        GoldLabel.objects.create(item=item, question=s.questions[0], value=planted[item.pk])
    s.planted = planted
    return s


def counter_majority(answers: list[str]) -> str:
    counts = Counter(answers)
    return max(("yes", "no"), key=lambda v: (counts[v], v == "yes"))  # a tie: the value listed first


def test_the_stage_endpoint_gives_competence_labels_and_soft_labels(labelled, researcher_client):
    response = researcher_client.get(reverse("annotation-main-aggregation", args=[labelled.stage.pk]))
    assert response.status_code == 200
    (question,) = response.json()["questions"]
    assert question["values"] == ["yes", "no"]
    assert (question["labels"], question["unsure_left_out"], question["items"]) == (23, 1, 8)
    assert [m["method"] for m in question["methods"]] == list(METHOD_KEYS)
    for method in question["methods"]:
        competence = {row["annotator"]: row["competence"] for row in method["annotators"]}
        assert set(competence) == {"A01", "A02", "A03"}  # pseudonyms, never names
        assert min(competence, key=competence.get) == "A03", method["method"]
        assert len(method["items"]) == 8
        for item in method["items"]:
            assert sum(item["soft_label"].values()) == pytest.approx(1.0)
            assert item["posterior"] == max(item["soft_label"].values())
        # Seven items were settled (by the majority); four have gold: the planted values.
        assert method["versus_final"]["n_items"] == 7 and method["versus_gold"]["n_items"] == 4
        assert method["versus_final"]["accuracy"] == 1.0 and method["versus_gold"]["accuracy"] == 1.0
        assert method["versus_final"]["cohen_kappa"] == pytest.approx(1.0)
    by_method = {m["method"]: {i["item_id"]: i for i in m["items"]} for m in question["methods"]}
    last = labelled.items[-1].pk
    # The majority, computed here: on the last item one "no" (A01) against one "yes" (A03) is a tie → "yes".
    assert by_method["majority_vote"][last]["label"] == counter_majority(["no", "yes"]) == "yes"
    assert by_method["majority_vote"][last]["soft_label"] == {"yes": 0.5, "no": 0.5}
    # The quality models have learned that A03 contradicts the others: they side with A01.
    for key in ("dawid_skene", "glad", "mace"):
        assert by_method[key][last]["label"] == labelled.planted[last] == "no", key
    assert by_method["dawid_skene"][last]["final_value"] is None
    assert "real-name" not in response.content.decode()


def test_only_researchers_read_the_aggregation(labelled, client):
    url = reverse("annotation-main-aggregation", args=[labelled.stage.pk])
    client.force_login(labelled.stage.enrollments.first().user)
    assert client.get(url).status_code == 403


def test_the_report_states_its_aggregate_and_shows_the_quality_aggregates_beside(labelled, researcher_client):
    report = researcher_client.get(reverse("annotation-report", args=[labelled.project.pk])).json()
    aggregation = report["aggregation"]
    assert "adjudicated" in aggregation["uses"] and [m["key"] for m in aggregation["methods"]] == list(METHOD_KEYS)
    (stage,) = aggregation["stages"]
    endpoint = researcher_client.get(reverse("annotation-main-aggregation", args=[labelled.stage.pk])).json()
    for ours, theirs in zip(stage["questions"][0]["methods"], endpoint["questions"][0]["methods"], strict=True):
        assert "items" not in ours
        assert ours["annotators"] == theirs["annotators"] and ours["versus_final"] == theirs["versus_final"]

    page = researcher_client.get(reverse("annotation:report", args=[labelled.project.pk])).content.decode()
    assert "Aggregation by annotator quality" in page and "data-aggregation-uses" in page
    assert "Each annotator&#x27;s estimated competence" in page or "Each annotator's estimated competence" in page
    for title in ("Majority vote", "Dawid–Skene", "GLAD", "MACE"):
        assert title in page
    assert 'data-aggregation-method="mace"' in page and "1.000 (n = 7)" in page
    assert "soft-parquet" in page
    markdown = researcher_client.get(reverse("annotation:report-download", args=[labelled.project.pk, "md"]))
    assert "## Aggregation by annotator quality" in markdown.content.decode()


def _p_columns(frame) -> list[str]:
    return [c for c in frame.columns if c.startswith("p_")]


def test_soft_label_exports_read_back_by_pandas_and_pyarrow(labelled, researcher_client):
    def download(fmt):
        response = researcher_client.get(reverse("annotation:labels-export", args=[labelled.project.pk, fmt]))
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
        return response.content

    frames = {
        "csv": pd.read_csv(io.BytesIO(download("soft-csv"))),
        "parquet": pq.read_table(io.BytesIO(download("soft-parquet"))).to_pandas(),
        "jsonl": pd.read_json(io.BytesIO(download("soft-jsonl")), lines=True),
    }
    for fmt, frame in frames.items():
        assert len(frame) == 4 * 8, fmt  # every method, every item
        assert _p_columns(frame) == ["p_yes", "p_no"], fmt
        assert frame[_p_columns(frame)].sum(axis=1).to_numpy() == pytest.approx([1.0] * 32), fmt
        assert list(frame["method"].drop_duplicates()) == list(METHOD_KEYS), fmt
        assert frame["p_yes"].dtype.kind == "f" and frame["posterior"].dtype.kind == "f", fmt
    csv_frame, parquet_frame = frames["csv"], frames["parquet"]
    # The three files read as they are hold the same values, in the same columns, types and order.
    assert parquet_frame["final_value"].isna().sum() == 4  # the item without a majority: empty, null or absent
    for fmt in ("csv", "jsonl"):
        pd.testing.assert_frame_equal(frames[fmt], parquet_frame, obj=fmt)
    # The export holds what the endpoint says.
    endpoint = researcher_client.get(reverse("annotation-main-aggregation", args=[labelled.stage.pk])).json()
    glad = {i["item_id"]: i["soft_label"]["no"] for i in endpoint["questions"][0]["methods"][2]["items"]}
    rows = csv_frame[csv_frame["method"] == "glad"]
    assert dict(zip(rows["item_id"], rows["p_no"], strict=True)) == pytest.approx(glad)
    api = researcher_client.get(reverse("annotation-labels-export", args=[labelled.project.pk]) + "?as=soft-parquet")
    assert api.status_code == 200 and pq.read_table(io.BytesIO(api.content)).num_rows == 32


def test_each_fit_is_kept_until_a_label_changes(labelled, monkeypatch):
    from annotation.selectors import crowd_aggregation as reads

    fits = []
    real = reads.aggregate

    def counted(rows, values, method):
        fits.append(method)
        return real(rows, values, method)

    monkeypatch.setattr(reads, "aggregate", counted)
    reads.cache.clear()
    first = reads.stage_aggregation(labelled.stage)
    assert fits == list(METHOD_KEYS)
    assert reads.stage_aggregation(labelled.stage) == first and fits == list(METHOD_KEYS)  # from the cache
    GoldLabel.objects.filter(item=labelled.items[0]).delete()  # gold is read afresh: no fit
    assert reads.stage_aggregation(labelled.stage)["questions"][0]["methods"][0]["versus_gold"]["n_items"] == 3
    assert len(fits) == len(METHOD_KEYS)
    label = labelled.items[0].assignments.first().labels.get()
    label.value = OTHER[label.value]
    label.save()
    reads.stage_aggregation(labelled.stage)
    assert fits == list(METHOD_KEYS) * 2  # a changed label is a new fit
