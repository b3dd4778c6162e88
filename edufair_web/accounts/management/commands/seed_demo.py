"""`manage.py seed_demo`: demo users, then whatever demo content each app provides (idempotent)."""

from importlib import import_module
from importlib.util import find_spec

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from edufair_web.accounts.demo import demo_users_seed

# Each app may offer `<app>.demo.demo_seed(stdout, small)`; they run in this order (audits first:
# the judge-validation project in annotation is built on the demo audit).
APPS_WITH_DEMO_CONTENT = ("audits", "annotation")


class Command(BaseCommand):
    help = "Create the demo users (one per role) and the apps' demo content. Safe to run twice."

    def add_arguments(self, parser):
        parser.add_argument(
            "--no-logins", action="store_true", help="Do not print the demo log-ins (rundemo prints them last)."
        )
        parser.add_argument(
            "--small",
            action="store_true",
            help="A smaller demo audit (2 questions per domain instead of all the sample questions), in a few "
            "seconds, and no second demo audit (the cue-sensitive judge) with its judge-validation project; "
            "everything else as in the full demo.",
        )

        parser.add_argument(
            "--i-know-this-is-production",
            action="store_true",
            dest="production",
            help="Seed although DEBUG is off. Existing users are never changed; the new demo users' passwords are the "
            "ones the README prints.",
        )

    def handle(self, *args, **options):
        if not settings.DEBUG and not options["production"]:
            raise CommandError(
                "seed_demo refuses with DEBUG off: it creates users (an operator among them) whose passwords the "
                "README prints. Seed a development install, or add --i-know-this-is-production."
            )
        users = demo_users_seed()
        for app in APPS_WITH_DEMO_CONTENT:
            if find_spec(f"{app}.demo") is not None:
                import_module(f"{app}.demo").demo_seed(stdout=self.stdout, small=options["small"])
        if not options["no_logins"]:
            self.stdout.write(demo_logins_text(users))


def demo_logins_text(users) -> str:
    lines = ["Demo log-ins (log in at /accounts/login/):"]
    lines += [
        f"  {role:<12} user: {username:<12} password: "
        + (password or "unchanged (the user existed before with another password)")
        for username, role, password in users
    ]
    return "\n".join(lines)
