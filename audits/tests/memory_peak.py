"""The Python memory a piece of code peaks at (tracemalloc), for the tests that bound an export's memory."""

import tracemalloc


def peak_mib(consume) -> float:
    """The peak of Python memory allocated while `consume()` runs, above what was allocated before it, in MiB."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        consume()
        return (tracemalloc.get_traced_memory()[1] - before) / 2**20
    finally:
        tracemalloc.stop()
