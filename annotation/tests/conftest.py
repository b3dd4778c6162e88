"""Annotation tests: the real Label Studio of the round-trip test starts as soon as collection ends, when
that test is collected, so that its start-up overlaps the tests before it. Under pytest-xdist every worker
collects every test and only one runs the round trip (its xdist group), so there the test's own fixture starts
it, in that worker alone."""

from . import label_studio_service

ROUND_TRIP_TEST = "test_label_studio_round_trip.py"


def pytest_collection_finish(session):
    if session.config.option.collectonly or hasattr(session.config, "workerinput"):
        return
    if any(ROUND_TRIP_TEST in item.nodeid for item in session.items):
        label_studio_service.start(session.config)


def pytest_sessionfinish(session):
    label_studio_service.stop(session.config)
