"""Writes of crowd arrivals: admitting a participant, holding their place while they work, giving it back.

An arrival is checked against what the link trusts (a signature under its secret, its approved list), then counted
against the link's arrival rates in the database, so every web process sees the same counts; the link's row is
locked meanwhile. A place is held by a recruit who completed and by one at work (not finished, not released);
a recruit idle longer than the link's reservation time, or who returned the study, is released: their unsubmitted
main items go back to the pool and their place to the next arrival. A released recruit who comes back may go on
while a place is free. Every refusal creates nothing: no user, no recruit, no visit."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation.models import Assignment, CrowdApprovedParticipant, CrowdLink, CrowdRecruit, CrowdVisit, Phase
from annotation.services.assignment import release_reservations
from annotation.services.crowd import (
    Arrival,
    CrowdRefused,
    arrival_from_query,
    crowd_finish,
    crowd_outcome,
    participant_hash,
    recruit_ids_record,
)
from annotation.services.enrollment import enrollment_create
from annotation.workflow.crowd_places import is_idle, rate_parse, wait_seconds
from annotation.workflow.crowd_signature import signature_matches
from edufair_web.accounts.roles import ANNOTATOR, user_set_role

# Recruits who hold a place: completed, or at work (no outcome yet) and not released.
HOLDS_PLACE = Q(outcome=CrowdRecruit.Outcome.COMPLETED) | Q(outcome="", released_at__isnull=True)
RETURNED = "returned"
IDLE = "idle"
# last_seen_at is written at most this often by a recruit's page views.
SEEN_EVERY = timedelta(seconds=60)


def _pseudonym() -> str:
    while True:
        name = f"crowd-{secrets.token_hex(5)}"
        if not User.objects.filter(username=name).exists():
            return name


class CrowdThrottled(CrowdRefused):
    """Too many arrivals in the link's window: ``wait`` seconds until the next one fits."""

    def __init__(self, message: str, wait: int):
        super().__init__(message)
        self.wait = wait


@dataclass(frozen=True)
class Entry:
    """What an arrival brings: the platform's ids and the recruiting page's signature (or '')."""

    arrival: Arrival
    signature: str


def entry_from_params(*, link: CrowdLink, params) -> Entry:
    """The ids and signature of an entry link's query (or of the start form, which carries them on)."""
    arrival = arrival_from_query(link=link, params=params)
    return Entry(arrival=arrival, signature=(params.get(link.signature_param) or "").strip()[:128])


def entry_check(*, link: CrowdLink, entry: Entry) -> None:
    """Refuse an entry the link does not trust: unsigned or wrongly signed, or a participant id not on the list."""
    arrival = entry.arrival
    if link.signature_required and not signature_matches(
        secret=link.entry_secret,
        participant_id=arrival.participant_id,
        study_id=arrival.study_id,
        given=entry.signature,
    ):
        raise CrowdRefused(
            "This link is not signed for your participant id. Please open the study again from the recruiting "
            "platform; if this keeps happening, message the researcher."
        )
    if link.approved_only:
        digest = participant_hash(link=link, participant_id=arrival.participant_id)
        if not CrowdApprovedParticipant.objects.filter(link=link, participant_hash=digest).exists():
            raise CrowdRefused(
                "Your participant id is not on this study's list of approved participants. If you were invited, "
                "message the researcher through the recruiting platform."
            )


def mark_hash(kind: str, value: str | None) -> str:
    """A keyed hash of a browser token or client address ('' for none): compared, never shown."""
    return salted_hmac(f"annotation.crowd.{kind}", value, algorithm="sha256").hexdigest() if value else ""


def _throttle(*, rows, field: str, rate: str | None, now, message: str) -> None:
    """Refuse when ``rows`` (arrivals of one kind) hold as many as the rate allows in its window."""
    parsed = rate_parse(rate)
    if parsed is None:
        return
    limit, period = parsed
    recent = list(rows.filter(**{f"{field}__gte": now - timedelta(seconds=period)}).values_list(field, flat=True))
    wait = wait_seconds(recent=recent, limit=limit, period=period, now=now)
    if wait:
        raise CrowdThrottled(message.format(wait=wait, s="" if wait == 1 else "s"), wait)


def _arrival_limits(*, link: CrowdLink, address_hash: str, new: bool, now) -> None:
    """Refuse past the per-address rate (every arrival) and the per-link rate (new recruits), counted in the
    database over the rate's window."""
    rates = settings.THROTTLE_RATES
    if address_hash:
        _throttle(
            rows=CrowdVisit.objects.filter(recruit__link=link, address_hash=address_hash),
            field="at",
            rate=rates.get("crowd_entry"),
            now=now,
            message="Too many arrivals have come from your address in a short time. "
            "Please try again in {wait} second{s}.",
        )
    if new:
        _throttle(
            rows=CrowdRecruit.objects.filter(link=link),
            field="created_at",
            rate=rates.get("crowd_link"),
            now=now,
            message="Many participants are arriving at once. Please try again in {wait} second{s}.",
        )


def release_idle(*, link: CrowdLink, now) -> int:
    """Release the link's recruits idle past its reservation time (call with the link locked). A recruit whose
    work is in fact finished is given their outcome instead (a completed one keeps the place)."""
    live = Assignment.objects.filter(
        stage_id=link.stage_id,
        annotator_id=OuterRef("user_id"),
        phase=Phase.MAIN,
        submitted_at__isnull=True,
        reserved_until__gt=now,
    )
    reservation = timedelta(minutes=link.reservation_minutes)
    candidates = (
        CrowdRecruit.objects.filter(link=link, outcome="", released_at__isnull=True, last_seen_at__lt=now - reservation)
        .annotate(live=Exists(live))
        .select_related("link", "user")
    )
    released = 0
    for recruit in candidates:
        if not is_idle(
            last_seen=recruit.last_seen_at, holds_live_reservation=recruit.live, now=now, reservation=reservation
        ):
            continue
        outcome = crowd_outcome(recruit)
        if outcome:
            crowd_finish(recruit=recruit, outcome=outcome)
            continue
        _release(recruit=recruit, reason=IDLE, now=now)
        released += 1
    return released


def _release(*, recruit: CrowdRecruit, reason: str, now) -> None:
    recruit.released_at = now
    recruit.release_reason = reason
    recruit.save(update_fields=["released_at", "release_reason"])
    release_reservations(stage=recruit.link.stage, annotator=recruit.user)


def _take_place(*, link: CrowdLink, now, message: str) -> None:
    """Refuse when every place is held, after giving back those of idle recruits."""
    release_idle(link=link, now=now)
    if CrowdRecruit.objects.filter(HOLDS_PLACE, link=link).count() >= link.max_recruits:
        raise CrowdRefused(
            f"{message} Places held by participants who stop come back after {link.reservation_minutes} minutes; "
            "you may try the link again then."
        )


def _rejoin(*, link: CrowdLink, recruit: CrowdRecruit, now) -> None:
    _take_place(link=link, now=now, message="You left this study and its places are all taken now.")
    recruit.released_at = None
    recruit.release_reason = ""
    recruit.last_seen_at = now
    recruit.save(update_fields=["released_at", "release_reason", "last_seen_at"])


@transaction.atomic
def crowd_admit(*, link: CrowdLink, entry: Entry, browser: str, address: str | None, now=None):
    """The recruit for this entry (resumed, or taken back in after they left while a place is free), or a new
    pseudonymous annotator enrolled in the stage when the link is open and a place is free; the visit is recorded
    with the browser's and address's marks. Returns (recruit, created); CrowdRefused says why not."""
    now = now or timezone.now()
    link = CrowdLink.objects.select_for_update().select_related("stage").get(pk=link.pk)
    entry_check(link=link, entry=entry)
    arrival = entry.arrival
    digest = participant_hash(link=link, participant_id=arrival.participant_id)
    address_hash = mark_hash("address", address)
    recruit = CrowdRecruit.objects.select_related("user", "link").filter(link=link, participant_hash=digest).first()
    _arrival_limits(link=link, address_hash=address_hash, new=recruit is None, now=now)
    created = recruit is None
    if recruit is not None:
        if not recruit.user.is_active:
            raise CrowdRefused("Your place in this study was withdrawn.")
        if recruit.released_at is not None and not recruit.outcome:
            _rejoin(link=link, recruit=recruit, now=now)
        else:
            recruit.last_seen_at = now
            recruit.save(update_fields=["last_seen_at"])
    else:
        if not link.is_open:
            raise CrowdRefused("This study is closed to new participants.")
        _take_place(link=link, now=now, message="This study has all the participants it needs right now.")
        user = User(username=_pseudonym())
        user.set_unusable_password()
        user.save()
        user_set_role(user=user, role=ANNOTATOR)
        try:
            with transaction.atomic():
                recruit = CrowdRecruit.objects.create(link=link, user=user, participant_hash=digest, last_seen_at=now)
        except IntegrityError as exc:  # the same participant arriving twice at once: the link's lock prevents it
            raise CrowdRefused("Please open the link again.") from exc
        enrollment_create(stage=link.stage, user=user)
    CrowdVisit.objects.create(
        recruit=recruit,
        participant_id=arrival.participant_id,
        study_id=arrival.study_id,
        session_id=arrival.session_id,
        browser_hash=mark_hash("browser", browser),
        address_hash=address_hash,
    )
    recruit_ids_record(recruit=recruit, arrival=arrival)
    return recruit, created


@transaction.atomic
def crowd_return(*, recruit: CrowdRecruit, now=None) -> CrowdRecruit:
    """The recruit stops and returns the study: their place and unsubmitted main items go back at once (their
    submitted labels stay). Nothing to do for one who finished or was released already."""
    now = now or timezone.now()
    CrowdLink.objects.select_for_update().filter(pk=recruit.link_id).first()
    recruit = CrowdRecruit.objects.select_related("link__stage", "user").get(pk=recruit.pk)
    if not recruit.outcome and recruit.released_at is None:
        _release(recruit=recruit, reason=RETURNED, now=now)
    return recruit


def crowd_seen(*, recruit_id: int, user_id: int, now=None) -> None:
    """The recruit signed in as ``user_id`` opened a page: they are at work (written at most once a minute); a
    released recruit is taken back while a place is free, else refused (CrowdRefused)."""
    now = now or timezone.now()
    mine = CrowdRecruit.objects.filter(pk=recruit_id, user_id=user_id)
    if mine.filter(released_at__isnull=True, last_seen_at__lt=now - SEEN_EVERY).update(last_seen_at=now):
        return
    if not mine.filter(released_at__isnull=False, outcome="").exists():
        return
    with transaction.atomic():
        recruit = mine.select_related("link").first()
        if recruit is None or recruit.released_at is None or recruit.outcome:
            return
        link = CrowdLink.objects.select_for_update().get(pk=recruit.link_id)
        recruit.refresh_from_db()
        if recruit.released_at is not None:
            _rejoin(link=link, recruit=recruit, now=now)
