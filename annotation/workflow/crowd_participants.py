"""Participant ids: what a platform's id looks like, and the researcher's approved list read from a platform export.

The list is either a CSV with a participant-id column (Prolific's export has ``Participant id``) or one id per line;
anything else is refused with the line it stopped at."""

from __future__ import annotations

import csv
import io
import re

PLATFORM_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
# Headers of the participant-id column in platform exports (compared without case, spaces or underscores).
ID_HEADERS = frozenset({"participantid", "prolificpid", "participant", "workerid"})
MAX_APPROVED = 100_000


class ParticipantListError(ValueError):
    """The uploaded list cannot be read: the message names the line."""


def _header_key(cell: str) -> str:
    return re.sub(r"[\s_-]", "", cell.strip().lower())


def participant_ids_parse(text: str) -> list[str]:
    """The distinct participant ids of ``text``, in their order: from the id column of a CSV with a header, or one
    per line. Blank lines are skipped."""
    rows = [row for row in csv.reader(io.StringIO(text.lstrip("\ufeff"))) if any(cell.strip() for cell in row)]
    if not rows:
        return []
    header = [_header_key(cell) for cell in rows[0]]
    column = next((n for n, key in enumerate(header) if key in ID_HEADERS), None)
    if column is not None:
        cells = [(n + 2, row[column] if column < len(row) else "") for n, row in enumerate(rows[1:])]
    elif len(rows[0]) > 1:
        raise ParticipantListError(
            "The CSV has no participant id column (a header such as 'Participant id'); or give one id per line."
        )
    else:
        cells = [(n + 1, row[0] if row else "") for n, row in enumerate(rows)]
    ids: dict[str, None] = {}
    for line, cell in cells:
        value = cell.strip()
        if not PLATFORM_ID_RE.match(value):
            raise ParticipantListError(
                f"Line {line}: {value[:40]!r} is not a participant id (1 to 128 letters, digits and _ . : -)."
            )
        ids[value] = None
    if len(ids) > MAX_APPROVED:
        raise ParticipantListError(f"At most {MAX_APPROVED} participant ids.")
    return list(ids)
