"""The columns of a job a worker claims with a lease: whose claim holds it, until when, how often it was taken.

A worker claims a row by compare-and-swap (`audits.services.leases`), writing a fresh `claim_token` and a
`lease_until`; it renews the lease while it works and writes only while its token still holds. A row whose
worker died keeps its token until the lease runs out, and then another worker takes it over (`runs` counts
the claims). The job's `status` and its choices stay on each model: they differ from job to job.
"""

from django.db import models


class LeasedJob(models.Model):
    claim_token = models.CharField(
        max_length=200, blank=True, help_text="The claim of the worker holding the job (its name and a random part)."
    )
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="A claim not renewed by then is taken over by another worker."
    )
    runs = models.PositiveIntegerField(default=0, help_text="Times a worker claimed it (more than 1 after a crash).")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
