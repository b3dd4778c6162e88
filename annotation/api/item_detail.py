"""One item's labels, decisions and discussion, as the adjudication and discussion endpoints answer with them.

The caller sees them as `workflow.blindness` allows (404 to anyone it keeps out).
"""

from rest_framework.exceptions import NotFound

from annotation.selectors.adjudication import discussion_visibility_for, item_side_by_side, main_item_of

from .serializers_training import AnnotatorItemSerializer


def item_detail(request, stage, item, visibility=None) -> dict:
    """The item's labels and discussion as ``request.user`` may see them (``visibility`` when already read)."""
    if visibility is None:
        visibility = discussion_visibility_for(user=request.user, stage=stage, item=item)
    if visibility is None:
        raise NotFound("No discussion of this item for you.")
    detail = item_side_by_side(stage=stage, item=item, visibility=visibility)
    main_item = main_item_of(stage, item)
    return {
        "stage": stage.pk,
        "item": AnnotatorItemSerializer(item).data,
        "status": main_item.status if main_item else None,
        "questions": [
            {
                "key": row["question"].key,
                "answers": [
                    {
                        "annotator": a["annotator"]["name"],
                        "you": a["annotator"]["you"],
                        **({"username": a["annotator"]["username"]} if visibility.full else {}),
                        "pre": a["pre"],
                        "post": a["post"],
                    }
                    for a in row["answers"]
                ],
                "decision": (
                    {
                        "method": row["decision"].method,
                        "final_value": row["decision"].final_value,
                        "note": row["decision"].note,
                        "decided_by": row["decision"].decided_by.username if row["decision"].decided_by else None,
                    }
                    if row["decision"]
                    else None
                ),
            }
            for row in detail["questions"]
        ],
        "discussion": (
            {
                "thread": detail["thread"].pk,
                "open": detail["thread"].is_open,
                "comments": [
                    {"author": c["author"], "you": c["you"], "body": c["body"], "at": c["created_at"]}
                    for c in detail["comments"]
                ],
            }
            if detail["thread"]
            else None
        ),
    }
