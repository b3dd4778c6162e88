"""The pure rules of crowd entry: the entry signature, the approved list read from a platform export, possible
duplicates (transitive, blind to empty marks and to shared networks) and the wait of a refused arrival."""

from datetime import UTC, datetime, timedelta

import pytest

from annotation.workflow.crowd_duplicates import SHARED_ADDRESS_RECRUITS, duplicate_groups
from annotation.workflow.crowd_participants import ParticipantListError, participant_ids_parse
from annotation.workflow.crowd_places import is_idle, rate_parse, wait_seconds
from annotation.workflow.crowd_signature import entry_signature, signature_matches


def test_the_signature_is_the_hmac_of_participant_and_study():
    sig = entry_signature(secret="s3cret", participant_id="p1", study_id="st")
    # Computed independently: printf 'p1:st' | openssl dgst -sha256 -hmac s3cret
    assert sig == "787038f4f6f1a8e039ba2430746da2b128df52912444f400829adb8d178cccd2"
    assert signature_matches(secret="s3cret", participant_id="p1", study_id="st", given=sig.upper())
    assert not signature_matches(secret="s3cret", participant_id="p2", study_id="st", given=sig)
    assert not signature_matches(secret="other", participant_id="p1", study_id="st", given=sig)
    assert not signature_matches(secret="", participant_id="p1", study_id="st", given=sig)
    assert not signature_matches(secret="s3cret", participant_id="p1", study_id="st", given="")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Submission id,Participant id,Status\ns1,aaa,APPROVED\ns2,bbb,RETURNED\n", ["aaa", "bbb"]),
        ("\ufeffparticipant_id\naaa\naaa\n", ["aaa"]),
        ("aaa\n\nbbb\r\nccc", ["aaa", "bbb", "ccc"]),
        ("", []),
    ],
)
def test_the_approved_list_reads_exports_and_plain_lists(text, expected):
    assert participant_ids_parse(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Submission id,Status\ns1,APPROVED\n", "no participant id column"),
        ("aaa\nnot an id\n", "Line 2"),
        ("Participant id,Status\nok,A\n,B\n", "Line 3"),
    ],
)
def test_an_unreadable_list_names_the_line(text, message):
    with pytest.raises(ParticipantListError, match=message):
        participant_ids_parse(text)


def test_duplicates_are_transitive_and_ignore_empty_marks():
    groups = duplicate_groups([(1, "b1", "a1"), (2, "b1", "a2"), (3, "b3", "a2"), (4, "", ""), (5, "", "")])
    assert groups[1] == {2, 3} and groups[3] == {1, 2}
    assert groups[4] == groups[5] == frozenset()


def test_an_address_behind_many_recruits_is_a_shared_network():
    many = [(n, f"b{n}", "campus") for n in range(SHARED_ADDRESS_RECRUITS + 1)]
    assert all(not others for others in duplicate_groups(many).values())
    few = [(n, f"b{n}", "home") for n in range(SHARED_ADDRESS_RECRUITS)]
    assert duplicate_groups(few)[0] == set(range(1, SHARED_ADDRESS_RECRUITS))


def test_a_refused_arrival_waits_until_the_oldest_leaves_the_window():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    recent = [now - timedelta(seconds=50), now - timedelta(seconds=10)]
    assert wait_seconds(recent=recent, limit=3, period=60, now=now) == 0
    assert wait_seconds(recent=recent, limit=2, period=60, now=now) == 10
    assert wait_seconds(recent=recent, limit=1, period=60, now=now) == 50
    assert rate_parse("30/minute") == (30, 60) and rate_parse("5/h") == (5, 3600) and rate_parse(None) is None


def test_idle_means_no_page_and_no_live_reservation():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    old = now - timedelta(minutes=31)
    assert is_idle(last_seen=old, holds_live_reservation=False, now=now, reservation=timedelta(minutes=30))
    assert not is_idle(last_seen=old, holds_live_reservation=True, now=now, reservation=timedelta(minutes=30))
    assert not is_idle(last_seen=now, holds_live_reservation=False, now=now, reservation=timedelta(minutes=30))
