"""What rendering a text as Markdown may cost, estimated in microseconds from the text alone (pure, linear)."""

from __future__ import annotations

import re

# Python-Markdown is quadratic in several ways, each measured on texts of a comment's length (5,000 characters) and
# twice that: from each "[" (or "<") it scans to the closing bracket or the end of the paragraph (200 "[" before
# plain text took 0.4 s); each inline match — a code span, an escape, emphasis, an entity, a tag — rebuilds the
# paragraph's string, and an unmatched backtick run rescans it ("``a`" repeated took 0.26 s); each heading, rule,
# list item or setext underline re-splits its paragraph ("a\n=\n" repeated took 0.2 s); the raw-HTML reader scans
# from each "<" across paragraphs; every level of list or quote nesting reparses its block. `render_cost` bounds
# each from above with weights measured on the adversarial cases (annotation/tests/test_markdown_budget.py keeps
# them), so a text it prices under a budget renders in about that much CPU time or less: on 600 random mixtures of
# Markdown's special characters it never estimated under the time measured. Ordinary prose costs 1 to 3 µs a
# character and is estimated 2 to 10 times over. A pattern still unknown is caught by the page's measured budget.
PER_CHAR_US = 3
PER_SCAN_US = 1.1  # each character scanned from an unclosed or distant bracket (escapes, expanded first, slow it)
PER_BLOCK_LEVEL_US = 40  # each paragraph, times one plus its nesting
PER_REBUILD_US = 0.025  # each line or inline marker of a paragraph, times the paragraph's length
PER_TAG_SCAN_US = 0.1  # each character the raw-HTML reader scans from a "<" to the next ">", across paragraphs
PER_CELL_US = 20  # each "|": a table cell costs some 17 µs (a row of 800 took 37 ms)
_INLINE_MARKERS = "`*_\\&<"

# What one text may cost: a comment (an annotator's note) and a document (a guideline, written by staff, one a page).
NOTE_BUDGET_US = 80_000
DOCUMENT_BUDGET_US = 1_000_000
# What one page view may spend on Markdown in all (measured CPU time); a text after that is shown as plain paragraphs.
PAGE_BUDGET_US = 150_000
# Longer text is not priced at all (the estimate itself stays cheap), and lists or quotes nested deeper would exceed
# the interpreter's recursion limit (a 500 on every page showing the text).
MAX_MARKDOWN_CHARS = 100_000
MAX_NESTING = 40  # list and quote levels at the start of a line (4 spaces of indentation count as one)

_BLOCK_BREAK = re.compile(r"\n[ \t]*\n")
# Python-Markdown replaces each backslash escape by a placeholder of up to five characters before it looks for links.
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_ESCAPE_PLACEHOLDER = "\x02000\x03"
_BRACKET = re.compile(r"[\[\]()<>]")
_OPENS = {"]": "[", ")": "("}
_ANGLE = re.compile(r"[<>]")
_LINE_NESTING = re.compile(r"^([ \t]*)((?:>[ \t]*|(?:[-*+]|\d{1,9}[.)])[ \t]+)*)", re.MULTILINE)
_MARKER = re.compile(r">|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t])")


def render_cost(text: str) -> float:
    """Microseconds Python-Markdown may take on `text`, at most (see the weights above); infinite for text longer
    than MAX_MARKDOWN_CHARS or nested deeper than MAX_NESTING."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return float("inf")
    cost = (
        PER_CHAR_US * len(text)
        + PER_CELL_US * text.count("|")
        + PER_SCAN_US * scan_cost(_ESCAPE.sub(_ESCAPE_PLACEHOLDER, text))
        + PER_TAG_SCAN_US * tag_scan_cost(text)
    )
    for block in _BLOCK_BREAK.split(text):
        depth = nesting(block)
        if depth > MAX_NESTING:
            return float("inf")
        rebuilds = block.count("\n") + 1 + sum(block.count(marker) for marker in _INLINE_MARKERS)
        cost += PER_BLOCK_LEVEL_US * (1 + depth) + PER_REBUILD_US * rebuilds * len(block)
    return cost


def scan_cost(text: str) -> int:
    """Characters Python-Markdown's link and tag patterns scan, at most: from each "[" or "(" to its closing bracket
    (or the end of its paragraph) and from each "<" to the next ">" (or that end). Linear in the text."""
    total = 0
    for block in _BLOCK_BREAK.split(text):
        open_at: dict[str, list[int]] = {"[": [], "(": []}
        angles = angle_sum = 0
        for match in _BRACKET.finditer(block):
            char, at = match.group(), match.start()
            if char in open_at:
                open_at[char].append(at)
            elif char in _OPENS:
                if open_at[_OPENS[char]]:
                    total += at - open_at[_OPENS[char]].pop()
            elif char == "<":
                angles, angle_sum = angles + 1, angle_sum + at
            else:
                total += angles * at - angle_sum
                angles = angle_sum = 0
        end = len(block)
        total += sum(end - at for opens in open_at.values() for at in opens) + angles * end - angle_sum
    return total


def tag_scan_cost(text: str) -> int:
    """Characters Python-Markdown's raw-HTML reader scans, at most: from each "<" to the next ">" or the end of the
    text, whatever paragraphs lie between ("<a\\n\\n" repeated took 0.18 s in 5,000 characters)."""
    total = angles = angle_sum = 0
    for match in _ANGLE.finditer(text):
        if match.group() == "<":
            angles, angle_sum = angles + 1, angle_sum + match.start()
        else:
            total += angles * match.start() - angle_sum
            angles = angle_sum = 0
    return total + angles * len(text) - angle_sum


def nesting(text: str) -> int:
    """The deepest list or quote nesting a line asks for: its markers ("- ", "> ", "1. ") and indentation."""
    deepest = 0
    for match in _LINE_NESTING.finditer(text):
        indent = len(match.group(1).expandtabs(4)) // 4
        depth = indent + len(_MARKER.findall(match.group(2)))
        deepest = max(deepest, depth)
    return deepest
