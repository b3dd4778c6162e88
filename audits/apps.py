"""Fairness audits of LLM tutors: question bank, conditions, dialogues, judge, statistics."""

from django.apps import AppConfig


class AuditsConfig(AppConfig):
    name = "audits"
    verbose_name = "Audits"
