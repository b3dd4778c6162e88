"""How an error message quotes a value from an uploaded file: cut short, with its length (pure).

A file's field can be megabytes; a message quoting it whole made a response of the same size.
"""


def shown(value, most: int = 60) -> str:
    """`value` as text of at most `most` characters, then "… (N characters)" when it was longer."""
    text = str(value)
    return text if len(text) <= most else f"{text[:most]}… ({len(text)} characters)"
