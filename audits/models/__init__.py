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
from .llm import LLMCall, ModelEndpoint  # noqa: E402  (audit engine)
from .runs import Audit, Condition, Dialogue, Turn, TurnScore  # noqa: E402

__all__ += ["Audit", "Condition", "Dialogue", "LLMCall", "ModelEndpoint", "Turn", "TurnScore"]
from .analysis import AnalysisResult  # noqa: E402  (fairness results cache)

__all__ += ["AnalysisResult"]
from .batch import JudgeBatch, JudgeRun  # noqa: E402  (judging runs and their Batch API batches)

__all__ += ["JudgeBatch", "JudgeRun"]
from .limits import EndpointLimitStatus, RateBucket  # noqa: E402  (shared rate-limit state)

__all__ += ["EndpointLimitStatus", "RateBucket"]
from .progress import AuditCallTally, AuditTally  # noqa: E402  (an audit's running totals)

__all__ += ["AuditCallTally", "AuditTally"]
