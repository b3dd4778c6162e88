"""What an agreement coefficient counts (items rated, items with ≥ 2 ratings, pairable values), and its words."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def rating_units(ratings_per_item: Iterable[int]) -> dict[str, int]:
    """From each item's number of ratings: the items rated, the items with two or more ratings (the units whose
    agreement is observed) and the ratings in those (the pairable values α uses)."""
    counts = [int(n) for n in ratings_per_item]
    return {
        "items_rated": sum(n >= 1 for n in counts),
        "items_pairable": sum(n >= 2 for n in counts),
        "pairable_values": sum(n for n in counts if n >= 2),
    }


def units_text(units: Mapping[str, int]) -> str:
    """The three counts in words, as every agreement cell states them beside its coefficient."""
    return (
        f"{units.get('items_rated', 0)} items rated, {units.get('items_pairable', 0)} with ≥ 2 ratings, "
        f"{units.get('pairable_values', 0)} pairable values"
    )


def p_below_text(p_below: Mapping) -> str:
    """α's probabilities of falling under its minimums in words, as the pages show them beside α's interval:
    "P(α < 0.667) = 0.02 · P(α < 0.800) = 0.41" ("" when there are none, or α has no valid resample)."""
    return " · ".join(
        f"P(α < {float(minimum):.3f}) = {share:.2f}" for minimum, share in p_below.items() if share is not None
    )
