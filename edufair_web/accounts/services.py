"""Writes for accounts: users with a role, worker heartbeats."""

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from .models import WorkerHeartbeat
from .roles import user_set_role


@transaction.atomic
def user_create_with_role(*, username: str, role: str, password: str, email: str = "") -> User:
    """Create (or update the password and role of) a user; used by the command and the demo seed."""
    user, _ = User.objects.get_or_create(username=username, defaults={"email": email})
    user.set_password(password)
    if email:
        user.email = email
    user.save()
    user_set_role(user=user, role=role)
    return user


def demo_user_ensure(*, username: str, role: str, password: str) -> User:
    """A demo user: created with its printed password and role when missing; an existing user (a real account of the
    same name, or the demo's from an earlier run) is left exactly as it is, its password never reset."""
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_password(password)
        user.save()
        user_set_role(user=user, role=role)
    return user


def worker_heartbeat_record(*, hostname: str, from_task: bool = False) -> None:
    """Note that the worker is alive (and, from the heartbeat task, that it ran a task from the broker).

    The beat thread and the task write the same row at about the same moment, each with the time it read
    before its statement: a write only ever moves a time forward, so the later reading wins whichever
    statement lands last, and the first write's reading is the start."""
    now = timezone.now()
    changes = {"last_seen": Greatest(F("last_seen"), Value(now))}
    if from_task:
        changes["last_task_at"] = Coalesce(Greatest(F("last_task_at"), Value(now)), Value(now))
    if WorkerHeartbeat.objects.filter(hostname=hostname).update(**changes):
        return
    try:
        with transaction.atomic():
            WorkerHeartbeat.objects.create(
                hostname=hostname, started_at=now, last_seen=now, last_task_at=now if from_task else None
            )
    except IntegrityError:  # the other writer created it in between
        WorkerHeartbeat.objects.filter(hostname=hostname).update(**changes)
