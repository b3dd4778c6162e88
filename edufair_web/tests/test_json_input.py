"""edufair_web.json_input: depth refused before parsing, brackets inside strings ignored."""

import pytest

from edufair_web.json_input import MAX_DEPTH, JSONInputError, loads, nesting_depth


def test_depth_counts_brackets_outside_strings_only():
    assert nesting_depth(b'{"a": "[[[[", "b": [1, {"c": "\\"]"}]}') == 3
    assert nesting_depth("no brackets") == 0


def test_deep_document_refused_without_building_it():
    text = "[" * 200_000 + "]" * 200_000
    with pytest.raises(JSONInputError, match=f"more than {MAX_DEPTH} levels"):
        loads(text)


def test_document_at_the_limit_parses():
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(text) is not None


def test_bad_json_named_in_words():
    with pytest.raises(JSONInputError, match="not valid JSON"):
        loads('{"a": ')


def test_bytes_that_are_not_utf8_named_in_words():
    with pytest.raises(JSONInputError, match="not UTF-8"):
        loads(b'{"a": "\xff\xfe"}')


def test_a_number_of_thousands_of_digits_is_named_in_words():
    # json.loads raises a plain ValueError for it (int()'s digit limit), which the importers did not expect: a 500.
    with pytest.raises(JSONInputError, match="a number has more than 4300 digits"):
        loads('{"id": ' + "9" * 5000 + "}")
    assert loads("[" + "9" * 4000 + "]") == [int("9" * 4000)]
