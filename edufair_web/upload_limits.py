"""The largest upload accepted per kind of file, as one validator for Django forms and DRF serializers.

The limits are settings.UPLOAD_MAX_BYTES, checked on the upload's size before a byte of it is read; the validator's
error states the limit. Beside them, the largest record of an imported file (`record_limit`)."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.template.defaultfilters import filesizeformat
from django.utils.deconstruct import deconstructible

KIND_NAMES = {"items": "item", "questions": "question"}


def upload_limit(kind: str) -> int:
    """Bytes: ITEM_IMPORT_MAX_BYTES for "items", QUESTION_IMPORT_MAX_BYTES for "questions"."""
    return settings.UPLOAD_MAX_BYTES[kind]


def upload_size_error(kind: str, size: int) -> str | None:
    """The refusal in words when `size` bytes are over the kind's limit, else None."""
    limit = upload_limit(kind)
    if size <= limit:
        return None
    return (
        f"The file is {filesizeformat(size)}; the largest {KIND_NAMES[kind]} file accepted is "
        f"{filesizeformat(limit)} ({limit} bytes)."
    )


@deconstructible
class MaxUploadSize:
    """`FileField(validators=[MaxUploadSize("items")])`: Django's upload handlers have spooled the file to disk
    (memory stays bounded); the size is refused here, before the importer reads it."""

    def __init__(self, kind: str):
        if kind not in KIND_NAMES:
            raise ValueError(f"unknown upload kind {kind!r}")
        self.kind = kind

    def __call__(self, upload) -> None:
        error = upload_size_error(self.kind, upload.size)
        if error:
            raise ValidationError(error, code="file_too_large")

    def __eq__(self, other) -> bool:
        return isinstance(other, MaxUploadSize) and other.kind == self.kind


def record_limit() -> int:
    """Bytes one record of an imported file (a line, a CSV row's line, an element of a JSON list) may hold:
    settings.IMPORT_RECORD_MAX_BYTES, checked as the file is read (edufair_web.record_bounds)."""
    return settings.IMPORT_RECORD_MAX_BYTES
