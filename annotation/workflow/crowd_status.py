"""A crowd recruit's status, pure: their recorded outcome if any, else what their gate and quota say.

A recorded outcome always wins (completed, screened out, not consented, and any outcome added later, such as returned),
so the code a recruit was shown never changes. Until one is recorded: the reason they gave their place back (returned,
idle) while they are out, screened out once the gate failed them, completed once they have labelled their quota of main
items, working otherwise."""

WORKING = "working"
COMPLETED = "completed"
SCREENED_OUT = "screened_out"


def crowd_status(*, recorded: str, gate_failed: bool, main_items_labelled: int, quota: int, released: str = "") -> str:
    if recorded:
        return recorded
    if released:
        return released
    if gate_failed:
        return SCREENED_OUT
    if main_items_labelled >= quota:
        return COMPLETED
    return WORKING
