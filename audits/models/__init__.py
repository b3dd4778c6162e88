"""Tables of audits, one module per area; every model is re-exported here so `audits.models.X` works."""

from .design import (
    DemographicDimension,
    DemographicLevel,
    NameCue,
    PromptTemplate,
    PromptTemplateImmutableError,
)
from .questionbank import Domain, Question, QuestionImport, QuestionSource

__all__ = [
    "DemographicDimension",
    "DemographicLevel",
    "Domain",
    "NameCue",
    "PromptTemplate",
    "PromptTemplateImmutableError",
    "Question",
    "QuestionImport",
    "QuestionSource",
]
