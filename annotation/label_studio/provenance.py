"""The provenance text region that says where a Label Studio annotation came from (pure).

It is kept inside the annotation itself: Label Studio stores an annotation's ``result`` as given but no free-form fields
beside it, so the kind (label, gold, adjudication), stage, phase, round, method and time travel as one read-only
``provenance`` text region, ``kind=label; stage=1; phase=main; round=pre; labelled_at=…``. The anonymous export adds
``annotator=anon-…``, a per-project pseudonym: Label Studio gives every annotation of an import to the importing user,
so this is how its annotators come back apart. No database here."""

from __future__ import annotations

KINDS = ("label", "gold", "adjudication")
KEYS = ("kind", "stage", "phase", "round", "method", "annotator", "labelled_at")


class ProvenanceInvalid(ValueError):
    """The provenance text is not ``key=value`` pairs with known keys."""


def provenance_text(fields: dict) -> str:
    """``key=value`` pairs in KEYS order, empty values left out."""
    unknown = set(fields) - set(KEYS)
    if unknown:
        raise ValueError(f"unknown provenance key(s): {', '.join(sorted(unknown))}")
    return "; ".join(f"{key}={fields[key]}" for key in KEYS if fields.get(key) not in (None, ""))


def provenance_parse(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for part in (p.strip() for p in str(text).split(";")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in KEYS:
            raise ProvenanceInvalid(f"{part!r} is not one of {', '.join(KEYS)} as key=value")
        fields[key] = value.strip()
    if fields.get("kind", "label") not in KINDS:
        raise ProvenanceInvalid(f"kind {fields['kind']!r} is not one of {', '.join(KINDS)}")
    if "stage" in fields and not fields["stage"].isdigit():
        raise ProvenanceInvalid(f"stage {fields['stage']!r} is not a stage number")
    return fields
