"""Template context of a crowd recruit's pages: their "leave" button's address and the link's terms.

The button posts "I do not consent / leave"; the terms (time, pay, quota) are repeated on the stage's training page."""

from django.urls import reverse

from annotation.views.crowd import CROWD_SESSION_KEY, session_recruit


def crowd_leave(request) -> dict:
    """`crowd_leave_url` and the link's `crowd_terms` (for its stage, `crowd_stage_id`) while the signed-in crowd
    recruit has not finished; nothing for anyone else."""
    if CROWD_SESSION_KEY not in request.session:
        return {}
    recruit = session_recruit(request)
    if recruit is None or recruit.outcome:
        return {}
    return {
        "crowd_leave_url": reverse("annotation:crowd-leave", args=[recruit.link.key]),
        "crowd_terms": recruit.link.arrival_terms(),
        "crowd_stage_id": recruit.link.stage_id,
    }
