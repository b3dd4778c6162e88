"""Staged human annotation: training, gate, labelling, adjudication, agreement, judge validation."""

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
