"""Fairness audits of LLM tutors: question bank, conditions, dialogues, judge, statistics."""

from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured


class AuditsConfig(AppConfig):
    name = "audits"
    verbose_name = "Audits"

    def ready(self) -> None:
        from audits.llm.outbound_policy import current_policy

        try:
            current_policy()  # a malformed EDUFAIR_ENDPOINT_ALLOWED_HOSTS stops the start, not a later save
        except ValueError as exc:
            raise ImproperlyConfigured(str(exc)) from None
