"""Writes for accounts: users with a role, worker heartbeats."""

from django.contrib.auth.models import User
from django.db import transaction
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


def worker_heartbeat_record(*, hostname: str, from_task: bool = False) -> WorkerHeartbeat:
    now = timezone.now()
    defaults = {"last_seen": now}
    if from_task:
        defaults["last_task_at"] = now
    heartbeat, created = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname, defaults=defaults, create_defaults={**defaults, "started_at": now}
    )
    return heartbeat
