"""Reads of annotation, by area: projects (overviews, pass-rate tables) and training (progress, feedback)."""
