"""A refused request is logged in one line; other errors keep their traceback; /favicon.ico is not a 404."""

import logging
import sys

import pytest

from edufair_web.log_filters import OneLineRefusals


def _record(status_code: int) -> logging.LogRecord:
    try:
        raise PermissionError("no")
    except PermissionError:
        info = sys.exc_info()
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden: /x", (), info)
    record.status_code = status_code
    return record


def test_a_403_loses_its_traceback_and_a_500_keeps_it():
    handler = logging.StreamHandler()
    refused, broken = _record(403), _record(500)
    assert OneLineRefusals().filter(refused) and OneLineRefusals().filter(broken)
    assert "\n" not in handler.format(refused) and "Traceback" in handler.format(broken)


@pytest.mark.django_db
def test_favicon_is_served(client):
    response = client.get("/favicon.ico")
    assert response.status_code in (301, 302) and response["Location"].endswith("favicon.svg")
