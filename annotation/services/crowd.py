"""Writes for crowd entry links: the link's settings, pseudonymous arrivals and when a recruit has finished.

Open and configure a stage's link, read an arrival's platform ids and key the participant id (a keyed hash, never the
raw id, on the annotator side; admitting them is `services.crowd_entry`), and say when a recruit has finished (their
quota of main items, screened out by the gate, or chose not to consent) and with which code and redirect URL."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation.models import Assignment, CrowdLink, CrowdRecruit, Enrollment, Phase, Stage
from annotation.models.crowd import OUTCOME_FIELDS
from annotation.services.training import SetupError
from annotation.workflow.crowd_participants import PLATFORM_ID_RE
from annotation.workflow.crowd_status import WORKING, crowd_status

PARAM_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
CODE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
MAX_ESTIMATED_MINUTES = 24 * 60
MAX_PAY = Decimal("100000")
CONFIG_FIELDS = (
    "is_open",
    "max_recruits",
    "items_per_recruit",
    "estimated_minutes",
    "pay_amount",
    "pay_currency",
    "participant_param",
    "study_param",
    "session_param",
    "completion_url",
    "completion_code",
    "screened_out_url",
    "screened_out_code",
    "not_consented_url",
    "not_consented_code",
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
        elif field == "estimated_minutes":
            ok = value is None or (isinstance(value, int) and not isinstance(value, bool))
            if not ok or (value is not None and not 1 <= value <= MAX_ESTIMATED_MINUTES):
                raise SetupError(
                    f"estimated_minutes is a whole number of minutes from 1 to {MAX_ESTIMATED_MINUTES}, or empty."
                )
        elif field == "pay_amount":
            value = _pay_amount(value)
        elif field == "pay_currency":
            value = value.strip().upper() if isinstance(value, str) else value
            if not isinstance(value, str) or not CURRENCY_RE.match(value):
                raise SetupError("pay_currency is a three-letter currency code, e.g. GBP or USD.")
        elif field.endswith("_param"):
            if not isinstance(value, str) or not PARAM_RE.match(value):
                raise SetupError(f"{field} is a query parameter name (letters, digits, _ . -).")
        elif field.endswith("_code"):
            if not isinstance(value, str) or not CODE_RE.match(value):
                raise SetupError(f"{field} is 1 to 64 letters, digits, _ and -.")
        elif field.endswith("_url"):
            if not isinstance(value, str):
                raise SetupError(f"{field} is an http(s) address (or empty).")
            parts = urlsplit(value)
            if value and (parts.scheme not in ("http", "https") or not parts.netloc):
                raise SetupError(f"{field} is an http(s) address.")
            if len(value) > 500:
                raise SetupError(f"{field} is at most 500 characters.")
        cleaned[field] = value
    params = [cleaned.get(f) for f in ("participant_param", "study_param", "session_param") if f in cleaned]
    if len(set(params)) != len(params):
        raise SetupError("The participant, study and session parameters need three different names.")
    return cleaned


def _pay_amount(value) -> Decimal | None:
    """The pay as a Decimal of at most two places from 0 to MAX_PAY (a JSON number or string, or the form's
    Decimal); None or '' is not stated."""
    if value is None or value == "":
        return None
    refusal = SetupError(f"pay_amount is an amount from 0 to {MAX_PAY:,} with at most two decimals, or empty.")
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise refusal
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation as exc:
        raise refusal from exc
    if not amount.is_finite() or not 0 <= amount <= MAX_PAY or amount != amount.quantize(Decimal("0.01")):
        raise refusal
    return amount.quantize(Decimal("0.01"))


def crowd_link_check(link: CrowdLink) -> None:
    """The rule across a link's settings once the given ones are set on it: each outcome's code is its own (the
    platform tells the outcomes apart by the code alone)."""
    codes = [link.code_for(outcome) for outcome in OUTCOME_FIELDS]
    if len(set(codes)) != len(codes):
        raise SetupError("The completed, screened-out and not-consented codes must differ from one another.")


def crowd_new_codes() -> dict:
    """Three different random codes, one per outcome, by the link's field names (a new link's, or its form's)."""
    codes: set[str] = set()
    while len(codes) < len(OUTCOME_FIELDS):
        codes.add(secrets.token_hex(4).upper())
    return {fields[0]: code for fields, code in zip(OUTCOME_FIELDS.values(), sorted(codes), strict=True)}


@transaction.atomic
def crowd_link_configure(*, stage: Stage, values: dict) -> CrowdLink:
    """Create the stage's link (new random key, codes drawn if not given) or change its settings."""
    cleaned = crowd_link_clean(values)
    link = CrowdLink.objects.select_for_update().filter(stage=stage).first()
    if link is None:
        link = CrowdLink(stage=stage, key=secrets.token_urlsafe(24), **crowd_new_codes())
    for field, value in cleaned.items():
        setattr(link, field, value)
    crowd_link_check(link)
    try:
        link.full_clean(exclude=["stage", "key"])
    except ValidationError as exc:
        raise SetupError(
            "; ".join(f"{field}: {' '.join(errors)}" for field, errors in exc.message_dict.items())
        ) from exc
    link.save()
    return link


def recruit_ids_record(*, recruit: CrowdRecruit, arrival: Arrival) -> None:
    """Keep the arrival's platform ids on the recruit: the latest ones are those the researcher acts on."""
    recruit.participant_id = arrival.participant_id
    recruit.study_id = arrival.study_id
    recruit.session_id = arrival.session_id
    recruit.save(update_fields=["participant_id", "study_id", "session_id"])


def crowd_outcome(recruit: CrowdRecruit) -> str:
    """'' while the recruit has work left; else their outcome (`annotation.workflow.crowd_status`): the recorded one,
    screened out once the gate failed them, completed once they submitted their quota of main items."""
    if recruit.outcome:
        return recruit.outcome
    link = recruit.link
    enrollment = Enrollment.objects.filter(stage_id=link.stage_id, user_id=recruit.user_id).first()
    done = Assignment.objects.filter(
        stage_id=link.stage_id, annotator_id=recruit.user_id, labels__phase=Phase.MAIN
    ).distinct()
    status = crowd_status(
        recorded="",
        gate_failed=enrollment is not None and enrollment.status == Enrollment.Status.FAILED,
        main_items_labelled=done.count(),
        quota=link.items_per_recruit,
    )
    return "" if status == WORKING else status


@transaction.atomic
def crowd_finish(*, recruit: CrowdRecruit, outcome: str) -> CrowdRecruit:
    """Record the recruit's outcome and the code they are shown, once (the same code on every later visit, even if
    the researcher changes the link's codes afterwards)."""
    recruit = CrowdRecruit.objects.select_for_update().select_related("link", "user").get(pk=recruit.pk)
    if not recruit.outcome:
        recruit.outcome = outcome
        recruit.finished_at = timezone.now()
        recruit.code = recruit.link.code_for(outcome)
        recruit.save(update_fields=["outcome", "finished_at", "code"])
    return recruit


def completion_code(recruit: CrowdRecruit) -> str:
    """The code the recruit was shown (their outcome's code on the link until it is recorded)."""
    return recruit.code or recruit.link.code_for(recruit.outcome)


def completion_redirect(recruit: CrowdRecruit) -> str:
    """The URL of the recruit's outcome with ``cc=<code>`` added (Prolific's form), or '' when none is set."""
    url = recruit.link.url_for(recruit.outcome)
    if not url:
        return ""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "cc"]
    query.append(("cc", completion_code(recruit)))
    return urlunsplit(parts._replace(query=urlencode(query)))
