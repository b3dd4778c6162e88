"""Writes of model endpoints beyond a form save: declaring a changed model, and testing the connection.

When the model behind an endpoint's URL changed, its revision (part of the ledger identity) goes up by one; a connection
test's outcome is stored for the launch form."""

import asyncio
import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from audits.models import ModelEndpoint

logger = logging.getLogger(__name__)


@transaction.atomic
def endpoint_revision_bump(*, endpoint: ModelEndpoint) -> int:
    """The model behind this URL changed (new weights, another quantisation, a provider's silent swap):
    from now on the endpoint's requests hash differently, so no answer of the earlier model is reused
    and the next run sends them afresh. Returns the new revision."""
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(revision=F("revision") + 1)
    endpoint.refresh_from_db(fields=["revision"])
    return endpoint.revision


def endpoint_connection_test(*, endpoint: ModelEndpoint) -> tuple[bool, str]:
    """One small request to the endpoint (no ledger, no retries), its outcome stored on the endpoint for the
    launch form's warning. Never reports the key, and never raises: a client that cannot be loaded (a
    requirement missing from the install) or any other error is a failed test naming what is wrong."""
    if endpoint.is_simulation:
        ok, message = True, "simulation endpoint: answers offline, no connection needed"
    else:
        ok, message = _connection_check(endpoint)
    outcome = {"last_test_ok": ok, "last_test_message": message[:500], "last_tested_at": timezone.now()}
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(**outcome)
    for field, value in outcome.items():
        setattr(endpoint, field, value)
    return ok, message


def _connection_check(endpoint: ModelEndpoint) -> tuple[bool, str]:
    try:
        # Imported here, not at the top: the OpenAI client costs over a second to import, and a web
        # process otherwise never needs it (the workers send the audits' requests).
        from audits.llm.openai_compat import endpoint_connection_check
    except ImportError as exc:  # ModuleNotFoundError included: the install lacks what a real call needs
        logger.exception("endpoint %s: the OpenAI client cannot be loaded", endpoint.pk)
        return False, f"this installation cannot load the OpenAI client: {exc} — install requirements.txt"
    try:
        return asyncio.run(endpoint_connection_check(endpoint.to_config()))
    except Exception as exc:  # noqa: BLE001 - the test reports every failure instead of answering 500
        logger.exception("endpoint %s: the connection test failed", endpoint.pk)
        return False, f"the connection test failed: {type(exc).__name__}: {exc}"
