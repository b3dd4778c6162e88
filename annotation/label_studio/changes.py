"""What a Label Studio export changed in what EduFair holds, and the words that refuse a task for it (pure).

A task is refused on its own (left out, the rest of the file imported) when Label Studio changed what EduFair keeps
as the source: the item's text (EduFair items are what its annotators saw: an edited text is never taken), a stored
label's answer (unless the import accepts revisions, when the change is kept as a revision beside the original, as
an annotator's own revision is), or a gold answer or adjudicated final (changed in EduFair only). No database here."""

from __future__ import annotations

from dataclasses import dataclass

from edufair_web.error_quotes import shown

from .config import UNSURE
from .reading import ReadAnswer, ReadTask

ACCEPT_REVISIONS = "accept_revisions"
SHOWN_CHANGES = 5  # changes named in one task's refusal


@dataclass(frozen=True)
class AnswerChange:
    where: str  # the annotation, as the reader names it
    key: str
    before: tuple[str, bool, str]  # (value, unsure, justification) stored in EduFair
    after: ReadAnswer

    def describe(self, task: ReadTask) -> str:
        at = self.where.removeprefix(f"{task.where}, ")
        value, unsure, justification = self.before
        was, now = _answer(value, unsure), _answer(self.after.value, self.after.unsure)
        if was != now:
            return f"{at}: {self.key!r} was {was} in EduFair and is {now} here"
        return (
            f"{at}: the justification of {self.key!r} was {shown(repr(justification), 30)} in EduFair and is "
            f"{shown(repr(self.after.justification), 30)} here"
        )


def _answer(value: str, unsure: bool) -> str:
    return repr(UNSURE) if unsure else repr(value)


def answer_changes(where: str, stored: dict[str, tuple[str, bool, str]], answers: dict[str, ReadAnswer]):
    """The answers of one annotation that differ from the stored labels of the same questions (a question not stored
    is no change: it is added)."""
    return [
        AnswerChange(where, key, stored[key], answer)
        for key, answer in answers.items()
        if key in stored and stored[key] != (answer.value, answer.unsure, answer.justification)
    ]


def changed_refusal(task: ReadTask, changes: list[AnswerChange]) -> str:
    listed = "; ".join(change.describe(task) for change in changes[:SHOWN_CHANGES])
    more = f"; and {len(changes) - SHOWN_CHANGES} more" if len(changes) > SHOWN_CHANGES else ""
    return (
        f"{task.where}: an annotation was changed in Label Studio ({listed}{more}), so the task is not imported; "
        f"import again with {ACCEPT_REVISIONS} to keep each change as a revision beside the original label"
    )


def edited_refusal(task: ReadTask, edited: str) -> str:
    return (
        f"{task.where}: its text was edited in Label Studio ({edited}); EduFair keeps the text its annotators "
        f"saw, so the task is not imported ({len(task.annotations)} annotation(s) left out): undo the edit in Label "
        "Studio and export again, or add the edited text to EduFair as a new item"
    )


def final_refusal(task: ReadTask, where: str, kind: str, key: str, stored: str, value: str) -> str:
    at = where.removeprefix(f"{task.where}, ")
    what = "gold answer" if kind == "gold" else "adjudicated final"
    return (
        f"{task.where}: {at}: the {what} to {key!r} is {stored!r} in EduFair and {value!r} here, so the task is not "
        f"imported; a {what} is changed in EduFair, not by an import"
    )


def one_user_refusal(identity: str, tasks: int) -> str:
    """A file whose every label is one Label Studio user's, with several of that user's annotations on one task: the
    import into Label Studio gave them all to the importing user (EduFair's anonymous export as it was before it
    named its annotators), so who labelled what is lost."""
    who = identity.rsplit(":", 1)[1] if identity.startswith("label-studio-user:") else identity
    return (
        f"file: every label annotation is by one Label Studio user ({shown(who)}), and {tasks} task(s) carry several "
        "of them for the same stage and round: Label Studio gives each annotation imported without completed_by to "
        "the user who imports the file, so this looks like an export made with anonymised annotators (EduFair's "
        "labelstudio-anonymous export from before it named annotators in the provenance) and who labelled what is "
        "lost. Export again from EduFair — labelstudio-anonymous (each annotator named by a per-project pseudonym in "
        "the provenance) or labelstudio (pseudonymous e-mails, created as Label Studio users before the import) — "
        "import that into Label Studio, and export the project as JSON again"
    )
