"""The run page's panel writes its counts with thousands separators and its cost with the currency
(edufair_web.display); the exports keep the raw numbers."""

from types import SimpleNamespace

from django.template.loader import render_to_string

PROGRESS = {
    "status": "finished",
    "outcome": "finished",
    "outcome_label": "finished",
    "percent": 100,
    "total": 12345,
    "done": 12345,
    "running": 0,
    "pending": 0,
    "failed": 0,
    "calls_sent": 98765,
    "calls_reused": 1000,
    "retries": 0,
    "calls_failed": 0,
    "prompt_tokens": 4567890,
    "completion_tokens": 1234567,
    "turns_scored": 54321,
    "turns_unparsable": 0,
    "turns_judge_failed": 0,
    "calls_unparsable": 0,
    "cost": 0.0,
    "cost_by_endpoint": [
        {"endpoint": "tutor", "calls": 4321, "prompt_tokens": 100000, "completion_tokens": 2000, "cost": 0.00123},
        {"endpoint": "sim", "simulation": True, "calls": 1, "prompt_tokens": 1, "completion_tokens": 1, "cost": 1e-7},
    ],
}


def panel(**progress) -> str:
    audit = SimpleNamespace(pk=7, status="finished")
    return render_to_string("audits/runs/_progress.html", {"audit": audit, "progress": {**PROGRESS, **progress}})


def test_the_run_panel_writes_big_counts_with_separators():
    html = panel()
    assert 'id="dialogues-done">12,345<' in html
    assert "98,765" in html and "4,567,890 / 1,234,567" in html and "54,321" in html and ">4,321<" in html
    assert "4567890" not in html


def test_the_run_panel_writes_cost_with_its_currency_and_a_sensible_precision():
    html = panel()
    assert '<th id="progress-cost">Cost</th><td headers="progress-cost" class="num">$0</td>' in html
    assert ">$0.0012<" in html and ">&lt; $0.0001<" in html
    assert "0.0000" not in html and "0.0012300" not in html
    assert '<th id="progress-cost">Cost</th><td headers="progress-cost" class="num">$12.35</td>' in panel(cost=12.3456)
