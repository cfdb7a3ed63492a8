"""Evalsite's Python client: `Client(base_url, token=...)` over the HTTP API (docs/api.md)."""

from evalsite_client.client import Client, EvalsiteError
from evalsite_client.models import (
    AgreementReport,
    Comparison,
    Estimate,
    Estimates,
    ImportReport,
    Judge,
    JudgeVersion,
    Project,
    Run,
)

__all__ = [
    "AgreementReport",
    "Client",
    "Comparison",
    "Estimate",
    "Estimates",
    "EvalsiteError",
    "ImportReport",
    "Judge",
    "JudgeVersion",
    "Project",
    "Run",
]
