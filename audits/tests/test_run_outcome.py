"""audits.run_outcome: a finished run reads finished, finished with failures or failed; failures grouped."""

from audits.run_outcome import (
    FAILED,
    FINISHED,
    FINISHED_WITH_FAILURES,
    FailureGroup,
    group_failures,
    host_of,
    run_outcome,
)


def test_outcome_weighs_what_the_dialogues_became():
    assert run_outcome("finished", done=10, failed=0) == FINISHED
    assert run_outcome("finished", done=9, failed=1) == FINISHED_WITH_FAILURES
    assert run_outcome("finished", done=0, failed=10) == FAILED
    # Work remains: the stored status stands.
    assert run_outcome("running", done=0, failed=10) == "running"
    assert run_outcome("paused", done=3, failed=0) == "paused"


def test_failures_grouped_by_cause_and_host_largest_first():
    rows = [
        ("connection failed", "10.0.0.5:8000", 3, 7),
        ("HTTP 500", "api.example:443", 5, 2),
        ("connection failed", "10.0.0.5:8000", 4, None),
        ("connection failed", "api.example:443", 1, 9),
        ("", "", 2, 4),
    ]
    assert group_failures(rows, limit=3) == [
        FailureGroup("connection failed", "10.0.0.5:8000", 7, 7),
        FailureGroup("HTTP 500", "api.example:443", 5, 2),
        FailureGroup("(no error recorded)", "", 2, 4),
    ]


def test_host_of_a_url_and_of_a_simulation():
    assert host_of("http://127.0.0.1:9/v1") == "127.0.0.1:9"
    assert host_of("") == "simulation"
