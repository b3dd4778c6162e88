"""The CPU time one page view may still spend rendering Markdown: a per-request ledger and the middleware opening it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from annotation.markdown_cost import PAGE_BUDGET_US

# Microseconds left, in a one-element list so that code running in a copy of the context still spends from it.
# None outside a request (a command, a task): there each text has only its own budget.
_LEFT: ContextVar[list[float] | None] = ContextVar("markdown_page_budget", default=None)


@contextmanager
def markdown_page_budget(microseconds: float = PAGE_BUDGET_US) -> Iterator[None]:
    """Within this block, Markdown rendering stops once `microseconds` of CPU time are spent on it."""
    token = _LEFT.set([microseconds])
    try:
        yield
    finally:
        _LEFT.reset(token)


def page_budget_spent() -> bool:
    left = _LEFT.get()
    return left is not None and left[0] <= 0


def page_budget_charge(microseconds: float) -> None:
    left = _LEFT.get()
    if left is not None:
        left[0] -= microseconds


class MarkdownPageBudgetMiddleware:
    """Each request (its view and its template, rendered inside) gets a fresh PAGE_BUDGET_US."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with markdown_page_budget():
            return self.get_response(request)
