"""Logging filters: a refused request (403) is one line in the log, not a traceback."""

import logging


class OneLineRefusals(logging.Filter):
    """Django logs every PermissionDenied with its traceback; a refusal is expected, so keep its one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
