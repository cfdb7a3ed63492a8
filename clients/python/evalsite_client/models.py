"""The API's typed documents, shared with the server: Evalsite's ninja endpoints declare these
same classes as their request and response schemas, so the client and the server cannot drift
(one definition, in this package, which the server installs as a dependency).

Report documents (the agreement report, a comparison, an estimate) are large and grow new keys;
their models type the keys a notebook reaches for and keep every other key (`extra="allow"`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Split = Literal["calibration", "held_out", "all"]
Evidence = Literal["none", "pages", "cited"]


class _Open(BaseModel):
    """A document that may carry more keys than typed here: they are kept, not dropped."""

    model_config = ConfigDict(extra="allow")


class ErrorDetail(BaseModel):
    reason: str
    file: str | None = None
    record: str | None = None
    path: str | None = None
    index: int | None = None  # batch imports: the position of the bad record in the list


class Project(BaseModel):
    slug: str
    name: str
    roles: list[str] = Field(description="Your roles in the project.")


class ImportReport(BaseModel):
    file: str
    format: str
    counts: dict[str, int]
    notes: list[str]
    summary: str


class JudgeVersion(BaseModel):
    ref: str = Field(description="NAME@VERSION, as commands and reports name it.")
    number: int
    provider: str
    model: str
    temperature: float | None
    samples: int
    criterion: str | None = Field(description="Empty: a ground-truth reader.")
    prompt: str
    prompt_sha256: str
    base_url: str = Field("", description="Empty: the provider API's default.")
    api_key_env: str = Field("", description="The variable holding the key (never the key).")
    evidence: Evidence = Field("none", description="What the model sees besides the text.")
    max_pages: int = Field(8, description="Evidence pages sent per call at most.")
    timeout_seconds: int = 120
    max_retries: int = 4
    concurrency: int = 4
    created_at: datetime


class Judge(BaseModel):
    name: str
    base_url: str = Field(description="The latest version's; empty: the provider's default.")
    api_key_env: str = Field(
        description="The latest version's variable holding the key (never the key)."
    )
    versions: list[JudgeVersion]


class JudgeIn(BaseModel):
    """A judge's settings: saved as a new version when anything changed (as on its page)."""

    name: str
    provider: str
    model: str
    prompt: str
    temperature: float = 0.0
    samples: int = 1
    criterion: str | None = None
    base_url: str = ""
    api_key_env: str = ""
    evidence: Evidence = Field(
        "none", description="none, pages (every evidence page as an image) or cited."
    )
    max_pages: int = Field(8, description="Evidence pages sent per call at most.")
    timeout_seconds: int = 120
    max_retries: int = 4
    concurrency: int = 4


class RunIn(BaseModel):
    split: Split = "calibration"
    version: int | None = Field(None, description="Default: the judge's latest version.")
    limit: int | None = None
    concurrency: int | None = Field(None, description="Default: the version's setting.")
    budget_usd: float | None = Field(
        None, description="Stop before the call that would make the run cost more."
    )
    confirm_held_out: bool = Field(
        False, description="Held-out and all splits are a recorded look: confirm it."
    )


class Run(BaseModel):
    id: int
    judge: str = Field(description="provider/model")
    judge_name: str
    judge_version: int
    split: str
    status: str = Field(
        description="queued, running, cancelling, done, cancelled, failed, interrupted, "
        "budget_reached"
    )
    planned: int
    finished: int
    percent: int
    done: int
    unparsed: int
    failed: int
    reused: int
    calls: int
    tokens_in: int
    tokens_out: int
    usage_missing: int
    cost_usd: float | None = Field(description="At the prices in force; null: no price was.")
    budget_usd: float | None = None
    skipped: int = Field(0, description="Pairwise items without answers A and B.")
    latency_ms: dict[str, int | None] = Field(
        default_factory=dict, description='{"p50", "p95"} of the answered calls, in ms.'
    )
    evidence: str = "none"
    error: str
    started_at: datetime | None
    finished_at: datetime | None


class AgreementReport(_Open):
    """`manage.py agreement_report --format json`'s document (docs/agreement-report.md)."""

    project: str
    split: str
    computed_at: str
    notes: list[str]
    results: list[dict[str, Any]] = Field(description="One row per criterion and judge.")
    human_human: list[dict[str, Any]]


class Comparison(_Open):
    """`manage.py compare_judges --format json`'s document (docs/agreement-report.md)."""

    project: str
    split: str
    computed_at: str


class Interval(BaseModel):
    value: float
    ci: list[float] = Field(description="[low, high], two-sided at level 1 - alpha.")


class Estimate(_Open):
    """One criterion and judge of an estimate (docs/estimates.md): PPI++, human-only and
    judge-only figures of the same measure. Its λ is the key `lambda` (a Python keyword:
    read it as `estimate.lam`); `labels_needed` comes with a half-width asked for."""

    criterion: str
    criterion_version: str
    judge: str = Field(description="provider/model (imported) or NAME@VERSION")
    measure: str = Field(description="What the figures are a mean of, in words.")
    split: str
    slice: str | None
    alpha: float
    n_labeled: int = Field(description="Items labelled by people (and the judge).")
    n_unlabeled: int = Field(description="Items labelled by the judge only.")
    ppi: Interval
    human_only: Interval
    judge_only: Interval
    label_selection: dict[str, Any] = Field(description="Which labels were used, and why.")
    judge_undecided: int
    humans_without_judge_label: int

    @property
    def lam(self) -> float:
        """PPI++'s λ: 0 ignores the judge, 1 is plain PPI."""
        return (self.model_extra or {})["lambda"]


class Estimates(_Open):
    """`manage.py estimate --format json`'s document: one entry per criterion and judge."""

    project: str
    estimates: list[Estimate]


class ScoreRun(BaseModel):
    id: int
    url: str
    report: dict[str, Any]
