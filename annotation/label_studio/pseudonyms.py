"""Pseudonymous annotator e-mail addresses for Label Studio's ``completed_by``.

Each is an e-mail address derived from the user's id with a per-deployment salt (HMAC-SHA256), so one person has the
same pseudonym in every project of a deployment and a different one in another deployment; no name or real address
leaves. The anonymous export names an annotator by another pseudonym, `anonymous_annotator`, salted with the project
as well: it cannot be linked to the e-mail, nor across projects, and keeps one person's labels together in the file."""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings

# RFC 2606 reserves .invalid: the address can never reach anyone.
DOMAIN = "pseudonyms.invalid"


def annotator_email(user_id: int, salt: str) -> str:
    digest = hmac.new(salt.encode(), f"user:{user_id}".encode(), hashlib.sha256).hexdigest()
    return f"annotator-{digest[:16]}@{DOMAIN}"


def deployment_annotator_email(user_id: int) -> str:
    """The pseudonym under this deployment's salt (``ANNOTATOR_PSEUDONYM_SALT``)."""
    return annotator_email(user_id, settings.ANNOTATOR_PSEUDONYM_SALT)


def anonymous_annotator(project_id: int, user_id: int) -> str:
    """``anon-`` and 12 hex digits: the annotator's pseudonym in the project's anonymous export."""
    salt = settings.ANNOTATOR_PSEUDONYM_SALT.encode()
    digest = hmac.new(salt, f"anonymous:project:{project_id}:user:{user_id}".encode(), hashlib.sha256).hexdigest()
    return f"anon-{digest[:12]}"
