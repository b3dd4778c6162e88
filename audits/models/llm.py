"""Tables of model calls: the endpoints models are reached at, and the ledger of every call made.

An endpoint stores the *name* of the environment variable that holds its API key, never the key. The
ledger (`LLMCall`) is keyed by the request hash computed in `audits.llm.client`; it is the response
cache and the resume record at once, so no call is paid for twice.
"""

import hashlib
import json
import re

from django.core.exceptions import ValidationError
from django.db import models

from audits.endpoint_roles import all_roles, roles_refusal
from audits.llm.calls import PROVIDER_OPENAI, PROVIDER_SIMULATION, EndpointConfig
from audits.llm.endpoint_shapes import header_name_refusal, headers_refusal, query_params_refusal
from audits.llm.outbound_policy import current_policy
from audits.llm.reasoning import REASONING_AUTO, REASONING_FORMATS
from audits.llm.request_body import AUTO, REASONING_EFFORTS, TEMPERATURE_PARAMETERS, TOKEN_LIMIT_PARAMETERS
from audits.llm.simulation import simulation_config_refusal
from edufair_web.text_limits import NOTE_MAX

ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def validate_env_var_name(value: str) -> None:
    """Accept an environment variable's name; refuse anything that looks like a key pasted by mistake."""
    if not value:
        return
    if not ENV_VAR_NAME.match(value) or value.lower().startswith(("sk-", "sk_")) or len(value) > 100:
        raise ValidationError(
            "Give the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself. "
            "Set the variable in the server's and the workers' environment."
        )


def validate_header_name(value: str) -> None:
    refusal = header_name_refusal(value) if value else ""
    if not refusal and value.lower() in ("authorization", "cookie"):
        refusal = "blank sends the key as 'Authorization: Bearer'; name another header only when the server wants one"
    if refusal:
        raise ValidationError(refusal)


# The fields that shape a request for a real server (reasoning, parameters, headers): every door that edits an
# endpoint offers them.
ENDPOINT_REQUEST_FIELDS = (
    "reasoning_format",
    "temperature_parameter",
    "token_limit_parameter",
    "reasoning_effort",
    "api_key_header",
    "extra_headers",
    "query_params",
)


class ModelEndpoint(models.Model):
    class Provider(models.TextChoices):
        OPENAI = PROVIDER_OPENAI, "OpenAI-compatible (OpenAI, vLLM, Ollama, llama.cpp, OpenRouter…)"
        SIMULATION = PROVIDER_SIMULATION, "Simulation (seeded, offline; for demos, tests and calibration)"

    name = models.CharField(max_length=100, unique=True)
    provider = models.CharField(max_length=20, choices=Provider.choices, default=Provider.OPENAI)
    base_url = models.URLField(
        max_length=300,
        blank=True,
        help_text="e.g. http://localhost:8001/v1 for vLLM; blank for api.openai.com. Loopback and private "
        "addresses only where the operator allows them.",
    )
    model = models.CharField(max_length=200, help_text="The model name the server expects.")
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[validate_env_var_name],
        help_text="Name of the environment variable holding the API key (never the key), e.g. EDUFAIR_KEY_VLLM "
        "or OPENAI_API_KEY; the operator decides which names are allowed. Blank: no key.",
    )
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    timeout = models.FloatField(default=60.0, help_text="Seconds before one request is abandoned (then retried).")
    max_concurrency = models.PositiveIntegerField(default=8, help_text="Requests in flight at once, per worker.")
    extra_params = models.JSONField(
        default=dict, blank=True, help_text='Sent with every request, e.g. {"top_p": 0.9, "seed": 1}.'
    )
    simulation_config = models.JSONField(
        default=dict,
        blank=True,
        help_text='Simulation only: {"seed": 0, "propensity": {...}, "bias": [{"level": "first_language='
        'non_english_l1", "metric": "corrective_tone", "shift": -0.3}]}',
    )
    price_input_per_million = models.DecimalField(
        max_digits=10, decimal_places=4, default=0, help_text="Price per 1M input tokens (your currency)."
    )
    price_output_per_million = models.DecimalField(
        max_digits=10, decimal_places=4, default=0, help_text="Price per 1M output tokens."
    )
    revision = models.PositiveIntegerField(
        default=1,
        help_text="Bump when the model behind this URL changes (new weights, another quantisation): part of the "
        "ledger identity, so earlier answers are not reused for the new model.",
    )
    requests_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Budget of requests per minute over all workers (blank: none)."
    )
    tokens_per_minute = models.PositiveIntegerField(
        null=True, blank=True, help_text="Budget of tokens per minute over all workers (blank: none)."
    )
    batch_capable = models.BooleanField(
        default=False, help_text="The server speaks the OpenAI Batch API (files + batches): judging may go through it."
    )
    batch_price_factor = models.DecimalField(
        max_digits=4, decimal_places=3, default=0.5, help_text="Batch price as a share of the online price."
    )
    batch_fallback = models.CharField(
        max_length=10,
        choices=[("refuse", "Refuse the run"), ("direct", "Judge by direct (online) calls")],
        default="refuse",
        help_text="When a batch-capable endpoint turns out to have no Files/Batch API: refuse the judging run, "
        "or judge its turns by online calls at the online price.",
    )
    reasoning_format = models.CharField(
        max_length=10,
        choices=[(value, value) for value in REASONING_FORMATS],
        default=REASONING_AUTO,
        help_text="How the model's reasoning arrives: auto (a reasoning field, and <think> blocks removed from the "
        "reply), field (a separate field only), tags (inside the reply only), none (the reply as it comes). Only "
        "the reply is the turn; the reasoning is kept in the ledger.",
    )
    temperature_parameter = models.CharField(
        max_length=10,
        choices=[(value, value) for value in TEMPERATURE_PARAMETERS],
        default=AUTO,
        help_text="auto: not sent to OpenAI's reasoning models (GPT-5, o-series), sent otherwise; send; omit (the "
        "model's default).",
    )
    token_limit_parameter = models.CharField(
        max_length=25,
        choices=[(value, value) for value in TOKEN_LIMIT_PARAMETERS],
        default=AUTO,
        help_text="The name max tokens is sent under. auto: max_completion_tokens for OpenAI's reasoning models, "
        "max_tokens otherwise.",
    )
    reasoning_effort = models.CharField(
        max_length=10,
        blank=True,
        choices=[(value, value) for value in REASONING_EFFORTS],
        help_text="Sent as reasoning_effort (OpenAI's reasoning models, vLLM, OpenRouter); blank: not sent.",
    )
    api_key_header = models.CharField(
        max_length=60,
        blank=True,
        validators=[validate_header_name],
        help_text="The header the key goes in instead of 'Authorization: Bearer', e.g. api-key for Azure OpenAI.",
    )
    extra_headers = models.JSONField(
        default=dict,
        blank=True,
        help_text="Headers sent with every request, not secret (keys come only from the key variable), e.g. "
        '{"HTTP-Referer": "https://example.org"}.',
    )
    query_params = models.JSONField(
        default=dict,
        blank=True,
        help_text='Query parameters on every request, not secret, e.g. {"api-version": "2024-10-21"} for Azure.',
    )
    roles = models.JSONField(
        default=all_roles,
        help_text="What this endpoint may be in an audit: tutor, student, judge (the judge's role covers the reveal "
        "check). The launch form offers it only in those lists.",
    )
    description = models.TextField(blank=True, max_length=NOTE_MAX)
    created_at = models.DateTimeField(auto_now_add=True)
    # The outcome of the last connection test (blank: never tested), so a launch can warn about it.
    last_test_ok = models.BooleanField(null=True, blank=True, editable=False)
    last_test_message = models.CharField(max_length=500, blank=True, editable=False)
    last_tested_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} (simulation)" if self.is_simulation else self.name

    @property
    def is_simulation(self) -> bool:
        return self.provider == self.Provider.SIMULATION

    def clean(self) -> None:
        refusal = roles_refusal(self.roles)
        if refusal:
            raise ValidationError({"roles": refusal})
        if self.provider == self.Provider.SIMULATION:
            refusal = simulation_config_refusal(self.simulation_config or {})
            if refusal:
                raise ValidationError({"simulation_config": refusal})
        if not 0 <= self.temperature <= 2:
            raise ValidationError({"temperature": "between 0 and 2"})
        if self.batch_price_factor is not None and not 0 < self.batch_price_factor <= 1:
            raise ValidationError({"batch_price_factor": "a share of the online price: above 0, at most 1"})
        if self.batch_capable and self.provider == self.Provider.SIMULATION:
            raise ValidationError({"batch_capable": "a simulation answers offline; only an HTTP endpoint has batches"})
        for field_name, refusal in (
            ("extra_headers", headers_refusal(self.extra_headers)),
            ("query_params", query_params_refusal(self.query_params)),
        ):
            if refusal:
                raise ValidationError({field_name: refusal})
        self.clean_outbound()

    def clean_outbound(self) -> None:
        """The operator's rule for what an endpoint may send and where (`audits.llm.outbound_policy`): the
        key variable by its name and the hosts it is bound to, the base URL by the addresses its host resolves to
        (a simulation calls nothing). The HTTP client checks both again when it is built and when it connects."""
        policy = current_policy()
        if self.api_key_env and ENV_VAR_NAME.match(self.api_key_env):
            refusal = policy.key_env_refusal(self.api_key_env)
            if refusal:
                raise ValidationError({"api_key_env": refusal})
            if not self.is_simulation:
                refusal = policy.key_host_refusal(self.api_key_env, self.base_url or "")
                if refusal:
                    raise ValidationError({"base_url": refusal})
        if not self.is_simulation:
            refusal = policy.base_url_refusal(self.base_url or "")
            if refusal:
                raise ValidationError({"base_url": refusal})

    def to_config(self) -> EndpointConfig:
        # The handle changes with anything that shapes the HTTP client or its limits, so an edited
        # endpoint gets a new one (its rate budgets stay shared: they are keyed by the endpoint's id).
        shape = json.dumps(
            [
                self.provider,
                self.base_url,
                self.model,
                self.api_key_env,
                self.timeout,
                self.max_concurrency,
                self.requests_per_minute,
                self.tokens_per_minute,
                self.api_key_header,
                self.extra_headers,
                self.query_params,
            ],
            default=str,
        )
        return EndpointConfig(
            key=f"endpoint:{self.pk}:{hashlib.sha1(shape.encode()).hexdigest()[:10]}",
            endpoint_id=self.pk,
            provider=self.provider,
            model=self.model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            max_concurrency=self.max_concurrency,
            extra_params=dict(self.extra_params or {}),
            simulation=dict(self.simulation_config or {}) if self.is_simulation else {},
            price_input_per_million=float(self.price_input_per_million),
            price_output_per_million=float(self.price_output_per_million),
            revision=self.revision,
            requests_per_minute=self.requests_per_minute or None,
            tokens_per_minute=self.tokens_per_minute or None,
            reasoning_format=self.reasoning_format,
            temperature_parameter=self.temperature_parameter,
            token_limit_parameter=self.token_limit_parameter,
            reasoning_effort=self.reasoning_effort,
            api_key_header=self.api_key_header,
            extra_headers=dict(self.extra_headers or {}),
            query_params=dict(self.query_params or {}),
        )

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * float(self.price_input_per_million)
            + completion_tokens * float(self.price_output_per_million)
        ) / 1_000_000


class LLMCall(models.Model):
    """One model request and its answer (or its recorded failure), keyed by the request hash."""

    class Status(models.TextChoices):
        OK = "ok", "Answered"
        FAILED = "failed", "Failed after retries"
        UNPARSABLE = "unparsable", "Answered, but the caller could not use the content (never served again)"

    # Unique by a constraint, not `unique=True`: on PostgreSQL the field's flag adds a second, pattern-ops index
    # that no query uses (no LIKE on a hash). Every index here serves a named query (test_ledger_indexes.py).
    request_hash = models.CharField(max_length=64)
    endpoint = models.ForeignKey(ModelEndpoint, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    purpose = models.CharField(max_length=20, help_text="tutor, student, check or judge.")
    model = models.CharField(max_length=200)
    reported_model = models.CharField(
        max_length=200, blank=True, help_text="The model name the server reported in its response."
    )
    request = models.JSONField(help_text="Messages and sampling parameters as sent (never the key).")
    response_text = models.TextField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    attempts = models.PositiveIntegerField(default=1, help_text="HTTP attempts over all runs, retries included.")
    attempt_log = models.JSONField(default=list, blank=True, help_text="Every failed attempt: error and wait.")
    error = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0, help_text="Billed over every attempt.")
    completion_tokens = models.PositiveIntegerField(default=0, help_text="Billed, reasoning included.")
    reasoning = models.TextField(blank=True, help_text="The model's reasoning, kept apart from the reply.")
    reasoning_tokens = models.PositiveIntegerField(default=0, help_text="Of the completion tokens, those reasoning.")
    finish_reason = models.CharField(max_length=20, blank=True, help_text="Why the model stopped (stop, length…).")
    latency_ms = models.FloatField(default=0)
    first_audit = models.ForeignKey(
        "audits.Audit",
        db_index=False,  # the (first_audit, status) index serves it
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="paid_calls",
        help_text="The audit that sent (and paid for) this call; others reuse it from the ledger.",
    )
    batch = models.ForeignKey(
        "audits.JudgeBatch",
        db_index=False,  # no query looks calls up by batch (and nothing deletes a batch)
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="calls",
        help_text="The Batch API batch that answered it (blank: sent online).",
    )
    price_factor = models.FloatField(
        default=1.0, help_text="Share of the endpoint's online price paid for it (its batch price factor by batch)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["first_audit", "status"])]
        constraints = [models.UniqueConstraint(fields=["request_hash"], name="llmcall_request_hash_unique")]

    def __str__(self) -> str:
        return f"{self.purpose} call {self.request_hash[:10]} ({self.status})"
