"""One entry point over the three importers: check the file, build the parameters, scan (validate + filter).

Pure: no Django. `scan_file` raises `ImportFileError` for anything wrong with the file or the parameters and
otherwise returns the file's facts and the importer's scan; writing is the service's job.
"""

from dataclasses import fields

from .domain_classifier import ClassifierParams
from .jsonl import FORMATS, generic_scan
from .reading import FileFacts, Opener, file_facts
from .records import ImportFileError, ImportScan, ProgressCallback, no_progress
from .sciq import SciQParams, sciq_scan
from .socrateach import SocraTeachFilter, socrateach_scan

SOURCES = ("socrateach", "sciq", "generic")
# Names accepted on the command line and in forms, and the importer each one means.
SOURCE_ALIASES = {
    "socrateach": "socrateach",
    "sciq": "sciq",
    "jsonl": "generic",
    "csv": "generic",
    "generic": "generic",
}


def _number(raw: dict, name: str, kind, default, *, minimum=None, maximum=None):
    value = raw.get(name)
    if value is None or value == "":
        return default
    try:
        value = kind(value)
    except (TypeError, ValueError):
        raise ImportFileError(f"parameter {name} must be a {kind.__name__}, got {value!r}") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ImportFileError(f"parameter {name} must lie between {minimum} and {maximum}, got {value}")
    return value


def socrateach_filter(raw: dict) -> SocraTeachFilter:
    defaults = SocraTeachFilter()
    reading = raw.get("reply_labels") or defaults.reply_labels
    if reading not in ("auto", "user_type", "tutor_feedback"):
        raise ImportFileError("parameter reply_labels must be auto, user_type or tutor_feedback")
    forbid = raw.get("forbid_disclosure", defaults.forbid_disclosure)
    if isinstance(forbid, str):
        forbid = forbid.strip().lower() not in ("0", "false", "no", "off")
    return SocraTeachFilter(
        min_exchanges=_number(raw, "min_exchanges", int, defaults.min_exchanges, minimum=0, maximum=1000),
        min_student_errors=_number(
            raw, "min_student_errors", int, defaults.min_student_errors, minimum=0, maximum=1000
        ),
        min_correct_after_last_error=_number(
            raw, "min_correct_after_last_error", int, defaults.min_correct_after_last_error, minimum=0, maximum=1000
        ),
        forbid_disclosure=bool(forbid),
        reply_labels=reading,
    )


def sciq_params(raw: dict) -> SciQParams:
    classifier_defaults = ClassifierParams()
    return SciQParams(
        classifier=ClassifierParams(
            threshold=_number(raw, "threshold", float, classifier_defaults.threshold, minimum=0.0, maximum=1.0),
            min_keyword_hits=_number(
                raw, "min_keyword_hits", int, classifier_defaults.min_keyword_hits, minimum=1, maximum=100
            ),
        ),
        per_domain_max=_number(raw, "per_domain_max", int, 500, minimum=1, maximum=1_000_000),
        seed=_number(raw, "seed", int, 0, minimum=0, maximum=2**32 - 1),
    )


PARAMETER_NAMES = {
    "socrateach": tuple(f.name for f in fields(SocraTeachFilter) if not f.name.endswith(("_types", "_markers"))),
    "sciq": ("threshold", "min_keyword_hits", "per_domain_max", "seed"),
    "generic": ("format",),
}


def scan_file(
    source: str,
    opener: Opener,
    *,
    filename: str = "",
    parameters: dict | None = None,
    progress: ProgressCallback = no_progress,
    record_limit: int,
) -> tuple[FileFacts, ImportScan]:
    """Validate and filter a whole file without writing anything; a record (line, row, element) over `record_limit`
    bytes is refused before it is held. Raises ImportFileError."""
    parameters = parameters or {}
    importer = SOURCE_ALIASES.get(source)
    if importer is None:
        raise ImportFileError(f"unknown source {source!r}; choose one of {', '.join(SOURCE_ALIASES)}")
    facts = file_facts(opener, progress)
    if importer == "socrateach":
        return facts, socrateach_scan(opener, facts, socrateach_filter(parameters), progress, record_limit=record_limit)
    if importer == "sciq":
        return facts, sciq_scan(opener, facts, sciq_params(parameters), progress, record_limit=record_limit)
    file_format = parameters.get("format") or ("csv" if source == "csv" else "auto")
    if file_format not in (*FORMATS, "auto"):
        raise ImportFileError(f"parameter format must be one of auto, {', '.join(FORMATS)}")
    return facts, generic_scan(
        opener, facts, filename=filename, file_format=file_format, progress=progress, record_limit=record_limit
    )
