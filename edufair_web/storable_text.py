"""Finding text no database here can store (a NUL or a lone surrogate) before the write (pure).

Such text is a NUL character (PostgreSQL refuses it in text and in JSON) or a lone surrogate (JSON's "\\ud800" escape
decodes to one; it is not UTF-8, so the driver fails).

Pure: no Django. Importers refuse such a value as a line or field error instead of a database error (a 500).
"""

from typing import Any


def unstorable(text: str) -> str | None:
    """What makes `text` unstorable, in words, or None."""
    if "\x00" in text:
        return "a NUL character (\\x00)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"a lone surrogate (\\u{ord(text[error.start]):04x})"
    return None


def unstorable_in(value: Any) -> str | None:
    """The same for every text of a decoded JSON value (keys included)."""
    if isinstance(value, str):
        return unstorable(value)
    if isinstance(value, dict):
        for key, item in value.items():
            found = unstorable_in(key) or unstorable_in(item)
            if found:
                return found
    elif isinstance(value, list):
        for item in value:
            found = unstorable_in(item)
            if found:
                return found
    return None
