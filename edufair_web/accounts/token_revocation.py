"""Revoking a user's API tokens whenever their password changes.

They are deleted however the password was changed (the log-in pages, the admin, `manage.py changepassword`,
`create_user` resetting it): a token must not outlive the password that issued it."""

from django.contrib.auth.models import User
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

from .tokens import api_tokens_revoke_all


@receiver(pre_save, sender=User, dispatch_uid="accounts.password_change_seen")
def password_change_seen(sender, instance: User, update_fields=None, raw=False, **kwargs) -> None:
    instance._edufair_password_changed = False
    if raw or instance.pk is None or (update_fields is not None and "password" not in update_fields):
        return  # a new user has no tokens; saving other fields (last_login at each log-in) changes no password
    stored = User.objects.filter(pk=instance.pk).values_list("password", flat=True).first()
    instance._edufair_password_changed = stored is not None and stored != instance.password


@receiver(post_save, sender=User, dispatch_uid="accounts.tokens_revoked_on_password_change")
def tokens_revoked_on_password_change(sender, instance: User, **kwargs) -> None:
    if getattr(instance, "_edufair_password_changed", False):
        instance._edufair_password_changed = False
        api_tokens_revoke_all(user=instance)
