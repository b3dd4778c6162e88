"""The leased-job primitive on judging-run rows: a claim is taken once, a second claimer is refused until the
lease runs out, only the holder renews or releases, a batch claims many rows in one UPDATE, and the lease
keeper reports a lost claim (or, for a batch's many rows, does not)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from audits.models import JudgeRun
from audits.services.leases import (
    ClaimLost,
    LeaseKeeper,
    lease_claim,
    lease_claim_ids,
    lease_hold,
    lease_release,
    lease_renew,
    lease_soonest,
)

QUEUED, RUNNING, DONE = JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING, JudgeRun.Status.DONE


def _runs(n: int = 1):
    ids = [JudgeRun.objects.create(owner=f"leases:{i}", task_name="t").pk for i in range(n)]
    return JudgeRun.objects.filter(pk__in=ids)


def _claim(jobs, token: str, seconds: float = 60) -> int:
    return lease_claim(jobs, token=token, seconds=seconds, statuses=[QUEUED])


@pytest.mark.django_db
def test_a_job_is_claimed_once_and_a_second_claimer_is_refused():
    jobs = _runs()
    assert _claim(jobs, "a") == 1
    assert _claim(jobs, "b") == 0
    run = jobs.get()
    assert (run.status, run.claim_token, run.runs) == (RUNNING, "a", 1)
    assert run.started_at is not None and run.lease_until > timezone.now()


@pytest.mark.django_db
def test_a_lease_that_ran_out_is_taken_over_and_the_dead_holder_can_no_longer_write():
    jobs = _runs()
    _claim(jobs, "dead")
    jobs.update(lease_until=timezone.now() - timedelta(seconds=1))
    assert _claim(jobs, "alive") == 1
    assert jobs.get().runs == 2
    assert lease_renew(jobs, token="dead", seconds=60) == 0
    assert lease_release(jobs, token="dead", status=DONE) == 0
    assert jobs.get().status == RUNNING


@pytest.mark.django_db
def test_a_running_job_without_a_lease_is_never_taken_over():
    jobs = _runs()
    jobs.update(status=RUNNING, claim_token="x", lease_until=None)
    assert _claim(jobs, "y") == 0


@pytest.mark.django_db
def test_renewal_by_a_stranger_raises_claim_lost_and_by_the_holder_extends_the_lease():
    jobs = _runs()
    _claim(jobs, "holder", seconds=1)
    before = jobs.get().lease_until
    lease_hold(jobs, token="holder", seconds=600, what="run", total=7)
    run = jobs.get()
    assert run.lease_until > before + timedelta(seconds=60) and run.total == 7
    with pytest.raises(ClaimLost, match="run was claimed"):
        lease_hold(jobs, token="stranger", seconds=600, what="run")


@pytest.mark.django_db
def test_release_writes_the_end_and_drops_the_lease_only_for_the_holder():
    jobs = _runs()
    _claim(jobs, "holder")
    assert lease_release(jobs, token="stranger", status=DONE) == 0
    assert lease_release(jobs, token="holder", status=DONE) == 1
    run = jobs.get()
    assert (run.status, run.lease_until) == (DONE, None)
    # Once ended, the holder's token releases nothing more unless the status is not checked.
    assert lease_release(jobs, token="holder", status=JudgeRun.Status.FAILED) == 0
    assert lease_release(jobs, token="holder", running=None, error="late") == 1


@pytest.mark.django_db
def test_many_rows_are_claimed_and_renewed_at_once_and_only_the_free_ones():
    jobs = _runs(3)
    first = jobs.order_by("pk").first()
    _claim(jobs.filter(pk=first.pk), "other")
    assert _claim(jobs, "batch") == 2
    assert lease_renew(jobs, token="batch", seconds=60) == 2
    assert set(jobs.values_list("claim_token", flat=True)) == {"other", "batch"}


@pytest.mark.django_db
def test_claimed_ids_are_the_free_rows_and_asking_again_finds_them_not_more():
    jobs = _runs(3)
    first, *rest = jobs.order_by("pk")
    _claim(jobs.filter(pk=first.pk), "other")
    claimed = lease_claim_ids(jobs, token="batch", seconds=60, statuses=[QUEUED])
    assert claimed == {run.pk for run in rest}
    # A claim whose answer was lost, asked again: the same rows, claimed once (one run each).
    assert lease_claim_ids(jobs, token="batch", seconds=60, statuses=[QUEUED]) == claimed
    assert sorted(jobs.filter(pk__in=claimed).values_list("runs", flat=True)) == [1, 1]
    assert lease_claim_ids(jobs, token="late", seconds=60, statuses=[QUEUED]) == set()


def test_the_keeper_reports_a_lost_claim_on_its_thread():
    renewals = iter([1, 0])
    with LeaseKeeper(lambda: next(renewals), every=0.01, name="run 1") as keeper:
        keeper._thread.join(2)  # it stops by itself once the claim is lost
    assert keeper.lost.is_set()
    with pytest.raises(ClaimLost, match="run 1"):
        keeper.check()


def test_a_batch_keeper_holding_no_row_for_a_moment_has_lost_nothing():
    calls = []
    keeper = LeaseKeeper(lambda: calls.append(1) or 0, every=0.01, many=True)
    with keeper:
        while len(calls) < 3:
            keeper._stop.wait(0.01)
    keeper.check()
    assert not keeper.lost.is_set()


@pytest.mark.django_db
def test_the_soonest_lease_is_that_of_a_running_job():
    jobs = _runs(3)
    assert lease_soonest(jobs) is None
    first, second, queued = jobs.order_by("pk")
    _claim(jobs.filter(pk=first.pk), "a", seconds=600)
    _claim(jobs.filter(pk=second.pk), "b", seconds=60)
    JudgeRun.objects.filter(pk=queued.pk).update(lease_until=timezone.now())  # not running: not counted
    assert lease_soonest(jobs) == JudgeRun.objects.get(pk=second.pk).lease_until
