"""Writes of model endpoints that are more than a form save: declaring that the model behind an
endpoint's URL changed (its revision, part of the ledger identity, goes up by one)."""

from django.db import transaction
from django.db.models import F

from audits.models import ModelEndpoint


@transaction.atomic
def endpoint_revision_bump(*, endpoint: ModelEndpoint) -> int:
    """The model behind this URL changed (new weights, another quantisation, a provider's silent swap):
    from now on the endpoint's requests hash differently, so no answer of the earlier model is reused
    and the next run sends them afresh. Returns the new revision."""
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(revision=F("revision") + 1)
    endpoint.refresh_from_db(fields=["revision"])
    return endpoint.revision
