"""Creates the operator role's group."""

from django.db import migrations


def create_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name="operator")


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="operator").delete()


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_role_groups")]

    operations = [migrations.RunPython(create_group, remove_group)]
