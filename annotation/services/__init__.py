"""Writes of annotation, by area: projects (and presets), enrollment, training (guidelines, examples,
training sets, norming, gate) and labels (the one door every label goes through)."""
