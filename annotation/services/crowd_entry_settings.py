"""Writes of whom a crowd link trusts: signed entries, the approved list, and how long an idle place is held.

`crowd_link_save` is the one door every page, API and admin form goes through: the link's settings
(`services.crowd.crowd_link_configure`) and its entry settings, checked together in one transaction. Without a
signature or a list, the link trusts anyone who knows a participant id; `link_trust` says so in plain words."""

from __future__ import annotations

import secrets

from django.db import transaction

from annotation.models import CrowdApprovedParticipant, CrowdLink, Stage
from annotation.services.crowd import PARAM_RE, crowd_link_configure, participant_hash
from annotation.services.training import SetupError
from annotation.workflow.crowd_participants import ParticipantListError, participant_ids_parse
from annotation.workflow.crowd_signature import signing_recipe

ENTRY_FIELDS = ("signature_required", "signature_param", "approved_only", "reservation_minutes")
# Also accepted by crowd_link_save: approved_participants (the list's text, or a list of ids: replaces the list)
# and rotate_secret.
MAX_RESERVATION_MINUTES = 24 * 60

# The largest approved list taken, as the platform's export or pasted ids (page, API, admin).
MAX_APPROVED_BYTES = 10_000_000


def entry_settings_clean(values: dict) -> dict:
    """The entry settings given, checked; a SetupError names the first bad one."""
    cleaned = {}
    for field in (*ENTRY_FIELDS, "rotate_secret", "approved_participants"):
        if field not in values:
            continue
        value = values[field]
        if field in ("signature_required", "approved_only", "rotate_secret"):
            if not isinstance(value, bool):
                raise SetupError(f"{field} is true or false.")
        elif field == "signature_param":
            if not isinstance(value, str) or not PARAM_RE.match(value):
                raise SetupError("signature_param is a query parameter name (letters, digits, _ . -).")
        elif field == "reservation_minutes":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RESERVATION_MINUTES:
                raise SetupError(f"reservation_minutes is a whole number from 1 to {MAX_RESERVATION_MINUTES}.")
        elif field == "approved_participants":
            if isinstance(value, list) and all(isinstance(pid, str) for pid in value):
                value = "\n".join(value)  # the API may send the ids as a list
            if not isinstance(value, str):
                raise SetupError("approved_participants is the text of the list (a CSV export or one id per line).")
            try:
                value = participant_ids_parse(value)
            except ParticipantListError as exc:
                raise SetupError(f"approved_participants: {exc}") from exc
        cleaned[field] = value
    return cleaned


@transaction.atomic
def crowd_link_save(*, stage: Stage, values: dict) -> CrowdLink:
    """Open or change the stage's link and whom it trusts, all or nothing."""
    entry = entry_settings_clean(values)
    link = crowd_link_configure(stage=stage, values=values)
    for field in ENTRY_FIELDS:
        if field in entry:
            setattr(link, field, entry[field])
    if link.signature_param in (link.participant_param, link.study_param, link.session_param):
        raise SetupError("signature_param must differ from the participant, study and session parameters.")
    if entry.get("rotate_secret") or not link.entry_secret:
        link.entry_secret = secrets.token_hex(32)
    if "approved_participants" in entry:
        CrowdApprovedParticipant.objects.filter(link=link).delete()
        CrowdApprovedParticipant.objects.bulk_create(
            [
                CrowdApprovedParticipant(link=link, participant_hash=participant_hash(link=link, participant_id=pid))
                for pid in entry["approved_participants"]
            ],
            batch_size=1000,
        )
    if link.approved_only and not CrowdApprovedParticipant.objects.filter(link=link).exists():
        raise SetupError("Upload the approved participant ids before letting only them in.")
    link.save()
    return link


def approved_count(link: CrowdLink) -> int:
    return CrowdApprovedParticipant.objects.filter(link=link).count()


def link_trust(link: CrowdLink) -> str:
    """What the link trusts, in the researcher's words."""
    if link.signature_required and link.approved_only:
        return "Only participant ids on the approved list, arriving with a valid signature, can enter."
    if link.signature_required:
        return "Only arrivals signed with this link's secret can enter: a made-up participant id is refused."
    if link.approved_only:
        return "Only participant ids on the approved list can enter."
    return (
        "Anyone who knows a participant id can enter as that participant, and anyone can make one up: "
        "require a signature or an approved list to stop that."
    )


def link_signing_recipe(link: CrowdLink) -> str:
    return signing_recipe(
        secret=link.entry_secret,
        participant_param=link.participant_param,
        study_param=link.study_param,
        signature_param=link.signature_param,
    )
