"""Signed crowd entries: the HMAC a recruiting page appends to the link, and how it is checked.

The signature is HMAC-SHA256 under the link's secret of ``participant_id + ":" + study_id``, in hexadecimal; the
platform's own redirect cannot make it without the secret, so made-up participant ids cannot enter."""

from __future__ import annotations

import hashlib
import hmac


def entry_signature(*, secret: str, participant_id: str, study_id: str) -> str:
    """The hex HMAC-SHA256 of ``participant_id:study_id`` under ``secret``."""
    message = f"{participant_id}:{study_id}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_matches(*, secret: str, participant_id: str, study_id: str, given: str) -> bool:
    """Whether ``given`` is the entry's signature (compared in constant time; case of the hex digits ignored)."""
    if not secret or not given:
        return False
    expected = entry_signature(secret=secret, participant_id=participant_id, study_id=study_id)
    return hmac.compare_digest(expected.encode(), given.strip().lower().encode())


def signing_recipe(*, secret: str, participant_param: str, study_param: str, signature_param: str) -> str:
    """A Python one-liner the researcher's recruiting page can run to sign one participant's link."""
    return (
        f"import hmac, hashlib; {signature_param} = hmac.new({secret!r}.encode(), "
        f'(f"{{{participant_param}}}:{{{study_param}}}").encode(), hashlib.sha256).hexdigest()'
    )
