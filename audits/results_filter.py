"""Which contrast rows a results page shows: by tutor, domain, dimension, metric, and violations only.

Pure: no Django. Rows are the exports' flat dicts (`audits.exports.export_tables`); an empty criterion
keeps every row. The filter narrows what the page lists, never what is computed or exported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RowFilter:
    tutor: int | None = None
    domain: str = ""
    dimension: str = ""
    metric: str = ""
    violations_only: bool = False

    @property
    def active(self) -> bool:
        return bool(self.tutor is not None or self.domain or self.dimension or self.metric or self.violations_only)

    def keeps(self, row: Mapping) -> bool:
        if self.tutor is not None and row.get("tutor") != self.tutor:
            return False
        if self.domain and row.get("domain") != self.domain:
            return False
        if self.dimension and row.get("dimension") != self.dimension:
            return False
        if self.metric and row.get("metric") != self.metric:
            return False
        return not self.violations_only or bool(row.get("violation"))

    def apply(self, rows: Iterable[Mapping]) -> list:
        return [row for row in rows if self.keeps(row)]


def choices(rows: Sequence[Mapping], field: str) -> list[str]:
    """The distinct values of `field` among the rows, sorted (for the filter's menus)."""
    return sorted({str(row[field]) for row in rows if row.get(field) not in (None, "")})
