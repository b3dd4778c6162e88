"""Writes for crowd entry links: the link's settings, pseudonymous arrivals and when a recruit has finished.

Open and configure a stage's link, read an arrival's platform ids and key the participant id (a keyed hash, never the
raw id, on the annotator side; admitting them is `services.crowd_entry`), and say when a recruit has finished (their
quota of main items, or screened out by the gate) and with which code."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation.models import Assignment, CrowdLink, CrowdRecruit, Enrollment, Phase, Stage
from annotation.services.training import SetupError
from annotation.workflow.crowd_participants import PLATFORM_ID_RE

PARAM_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
CODE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CONFIG_FIELDS = (
    "is_open",
    "max_recruits",
    "items_per_recruit",
    "participant_param",
    "study_param",
    "session_param",
    "completion_url",
    "completion_code",
    "screened_out_code",
)


class CrowdRefused(Exception):
    """An arrival the link does not take (closed, full, no participant id): the message is shown to them."""


@dataclass(frozen=True)
class Arrival:
    participant_id: str
    study_id: str
    session_id: str


def participant_hash(*, link: CrowdLink, participant_id: str) -> str:
    """HMAC-SHA256 of the participant id under the installation's secret key, salted with the stage."""
    return salted_hmac(f"annotation.crowd.{link.stage_id}", participant_id, algorithm="sha256").hexdigest()


def arrival_from_query(*, link: CrowdLink, params) -> Arrival:
    """The platform's ids from the entry URL's query, by the link's parameter names."""
    values = []
    for name, required in ((link.participant_param, True), (link.study_param, False), (link.session_param, False)):
        value = (params.get(name) or "").strip()
        if not value and required:
            raise CrowdRefused(f"The link needs the {name} parameter (your participant id).")
        if value and not PLATFORM_ID_RE.match(value):
            raise CrowdRefused(f"{name} is not a platform id (1 to 128 letters, digits and _ . : -).")
        values.append(value)
    return Arrival(*values)


def crowd_link_clean(values: dict) -> dict:
    """The configuration fields given, checked; a SetupError names the first bad one."""
    cleaned = {}
    for field in CONFIG_FIELDS:
        if field not in values:
            continue
        value = values[field]
        if field == "is_open":
            if not isinstance(value, bool):
                raise SetupError("is_open is true or false.")
        elif field in ("max_recruits", "items_per_recruit"):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
                raise SetupError(f"{field} is a whole number from 1 to 100000.")
        elif field.endswith("_param"):
            if not isinstance(value, str) or not PARAM_RE.match(value):
                raise SetupError(f"{field} is a query parameter name (letters, digits, _ . -).")
        elif field.endswith("_code"):
            if not isinstance(value, str) or not CODE_RE.match(value):
                raise SetupError(f"{field} is 1 to 64 letters, digits, _ and -.")
        elif field == "completion_url":
            if not isinstance(value, str):
                raise SetupError("completion_url is an http(s) address (or empty).")
            parts = urlsplit(value)
            if value and (parts.scheme not in ("http", "https") or not parts.netloc):
                raise SetupError("completion_url is an http(s) address.")
            if len(value) > 500:
                raise SetupError("completion_url is at most 500 characters.")
        cleaned[field] = value
    params = [cleaned.get(f) for f in ("participant_param", "study_param", "session_param") if f in cleaned]
    if len(set(params)) != len(params):
        raise SetupError("The participant, study and session parameters need three different names.")
    return cleaned


@transaction.atomic
def crowd_link_configure(*, stage: Stage, values: dict) -> CrowdLink:
    """Create the stage's link (new random key, codes drawn if not given) or change its settings."""
    cleaned = crowd_link_clean(values)
    link = CrowdLink.objects.select_for_update().filter(stage=stage).first()
    if link is None:
        link = CrowdLink(
            stage=stage,
            key=secrets.token_urlsafe(24),
            completion_code=secrets.token_hex(4).upper(),
            screened_out_code=secrets.token_hex(4).upper(),
        )
    for field, value in cleaned.items():
        setattr(link, field, value)
    if link.completion_code == link.screened_out_code:
        raise SetupError("The completed and screened-out codes must differ.")
    try:
        link.full_clean(exclude=["stage", "key"])
    except ValidationError as exc:
        raise SetupError(
            "; ".join(f"{field}: {' '.join(errors)}" for field, errors in exc.message_dict.items())
        ) from exc
    link.save()
    return link


def crowd_outcome(recruit: CrowdRecruit) -> str:
    """'' while the recruit has work left; screened out once the gate failed them; completed once they
    submitted their quota of main items."""
    if recruit.outcome:
        return recruit.outcome
    link = recruit.link
    enrollment = Enrollment.objects.filter(stage_id=link.stage_id, user_id=recruit.user_id).first()
    if enrollment is not None and enrollment.status == Enrollment.Status.FAILED:
        return CrowdRecruit.Outcome.SCREENED_OUT
    done = Assignment.objects.filter(
        stage_id=link.stage_id, annotator_id=recruit.user_id, labels__phase=Phase.MAIN
    ).distinct()
    if done.count() >= link.items_per_recruit:
        return CrowdRecruit.Outcome.COMPLETED
    return ""


@transaction.atomic
def crowd_finish(*, recruit: CrowdRecruit, outcome: str) -> CrowdRecruit:
    """Record the recruit's outcome once (the code they were shown stays the same on every later visit)."""
    recruit = CrowdRecruit.objects.select_for_update().select_related("link").get(pk=recruit.pk)
    if not recruit.outcome:
        recruit.outcome = outcome
        recruit.finished_at = timezone.now()
        recruit.save(update_fields=["outcome", "finished_at"])
    return recruit


def completion_code(recruit: CrowdRecruit) -> str:
    link = recruit.link
    return link.completion_code if recruit.outcome == CrowdRecruit.Outcome.COMPLETED else link.screened_out_code


def completion_redirect(recruit: CrowdRecruit) -> str:
    """The link's completion URL with ``cc=<code>`` added (Prolific's form), or '' when none is set."""
    url = recruit.link.completion_url
    if not url:
        return ""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "cc"]
    query.append(("cc", completion_code(recruit)))
    return urlunsplit(parts._replace(query=urlencode(query)))
