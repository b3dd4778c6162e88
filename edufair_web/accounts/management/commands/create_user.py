"""`manage.py create_user NAME --role researcher|adjudicator|annotator|operator [--password P] [--email E]`.

A crowd participant's password is never reset here (`edufair_web.accounts.link_only`)."""

import secrets

from django.core.management.base import BaseCommand, CommandError

from edufair_web.accounts.link_only import LINK_ONLY, LinkOnlyRefused
from edufair_web.accounts.roles import ROLES
from edufair_web.accounts.services import user_create_with_role


class Command(BaseCommand):
    help = "Create a user with one role (or reset the password and role of an existing one)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=ROLES)
        parser.add_argument("--password", help="Default: a random password, printed once.")
        parser.add_argument("--email", default="")

    def handle(self, *args, username, role, password, email, **options):
        if not username.strip():
            raise CommandError("username must not be empty")
        password = password or secrets.token_urlsafe(12)
        try:
            user_create_with_role(username=username, role=role, password=password, email=email)
        except LinkOnlyRefused:
            raise CommandError(f"{username}: {LINK_ONLY}.") from None
        self.stdout.write(f"{username} ({role}) password: {password}")
