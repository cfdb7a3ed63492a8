"""`Client`: one method per thing a notebook does with Evalsite, over httpx.

Requests carry `Authorization: Bearer <token>` (create one at /account/tokens/ or with
`manage.py api_token`). Every refusal raises `EvalsiteError` with the server's one error shape
(reason, and the file, record and path of a bad input).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx

from evalsite_client.models import (
    AgreementReport,
    Comparison,
    ErrorDetail,
    Estimates,
    ImportReport,
    Judge,
    Project,
    Run,
    RunIn,
    ScoreRun,
)

_BLOCK = 1 << 16


class EvalsiteError(Exception):
    """The server refused: `status` is the HTTP status, `error` the reason and where."""

    def __init__(self, status: int, error: ErrorDetail):
        where = ", ".join(
            f"{k} {v}" for k, v in (("file", error.file), ("record", error.record),
                                    ("path", error.path)) if v is not None
        )  # fmt: skip
        super().__init__(f"{status}: {error.reason}" + (f" ({where})" if where else ""))
        self.status = status
        self.error = error


def _raise_for(response: httpx.Response) -> None:
    if response.is_success:
        return
    response.read()
    try:
        detail = ErrorDetail.model_validate(response.json()["error"])
    except (ValueError, KeyError, TypeError):
        detail = ErrorDetail(reason=response.text[:500] or response.reason_phrase)
    raise EvalsiteError(response.status_code, detail)


class Client:
    """`Client("https://evalsite.example.com", token="evs_...")`; the token defaults to the
    EVALSITE_TOKEN environment variable."""

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None):  # fmt: skip
        token = token or os.environ.get("EVALSITE_TOKEN")
        if not token:
            raise ValueError("an API token is needed: Client(base_url, token='evs_...')")
        self.http = httpx.Client(
            base_url=base_url.rstrip("/") + "/api/",
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
            transport=transport,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def _call(self, method: str, url: str, **kwargs) -> Any:
        response = self.http.request(method, url, **kwargs)
        _raise_for(response)
        return response.json() if response.content else None

    # --- projects and imports ----------------------------------------------------------------

    def projects(self) -> list[Project]:
        """The projects you are a member of, with your roles."""
        return [Project.model_validate(p) for p in self._call("GET", "projects")]

    def import_records(self, slug: str, records_or_path: Iterable[Mapping] | str | os.PathLike,
                       *, questions: Iterable[str] = ()) -> ImportReport:  # fmt: skip
        """Import FORMATS §4 records (dicts, or a .jsonl file's path), streamed as one JSONL
        body: the server checks it line by line and writes it in one transaction."""
        params = [("questions", q) for q in questions]
        if isinstance(records_or_path, str | os.PathLike):
            return self._post_jsonl(slug, Path(records_or_path), params)
        with tempfile.TemporaryDirectory(prefix="evalsite-client-") as folder:
            path = Path(folder) / "records.jsonl"
            with path.open("w", encoding="utf-8") as handle:
                for record in records_or_path:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            return self._post_jsonl(slug, path, params)

    def _post_jsonl(self, slug: str, path: Path, params) -> ImportReport:
        def blocks() -> Iterator[bytes]:
            with path.open("rb") as handle:
                while block := handle.read(_BLOCK):
                    yield block

        headers = {"Content-Type": "application/x-ndjson",
                   "Content-Length": str(path.stat().st_size)}  # fmt: skip
        data = self._call("POST", f"projects/{slug}/items.jsonl", params=params,
                          content=blocks(), headers=headers)  # fmt: skip
        return ImportReport.model_validate(data)

    def import_file(self, slug: str, path: str | os.PathLike, format: str | None = None, *,
                    questions: Iterable[str] = (),
                    label_config: str | os.PathLike | None = None) -> ImportReport:  # fmt: skip
        """Import one file as `manage.py import_items` reads it: a .zip bundle, JSONL, CSV,
        review JSON, TextFlow or a Label Studio export (`format` detected unless given);
        `label_config`: the Label Studio project's label config file (its labels)."""
        path = Path(path)
        data = {"questions": list(questions)}
        if format:
            data["format"] = format
        if label_config is not None:
            data["label_config"] = Path(label_config).read_text(encoding="utf-8")
        with path.open("rb") as handle:
            report = self._call("POST", f"projects/{slug}/imports", data=data,
                                files={"file": (path.name, handle)})  # fmt: skip
        return ImportReport.model_validate(report)

    # --- reports -----------------------------------------------------------------------------

    def agreement_report(self, slug: str, criterion: str | None = None,
                         split: str | None = "held_out", *, seed: int = 0) -> AgreementReport:  # fmt: skip
        """The same document as `manage.py agreement_report --format json` (a look at held-out
        items is recorded under your name, as for the command). `held_out`, the default, is
        the command's default too: while no split is drawn it reads every item, with a note."""
        params = {"seed": seed, **({"criterion": criterion} if criterion else {}),
                  **({"split": split} if split and split != "held_out" else {})}  # fmt: skip
        data = self._call("GET", f"projects/{slug}/agreement", params=params)
        return AgreementReport.model_validate(data)

    def compare(self, slug: str, criterion: str, a: str, b: str, *, split: str = "all",
                seed: int = 0) -> Comparison:  # fmt: skip
        """Two judges (NAME@VERSION or provider/model) item by item on one criterion."""
        params = {"criterion": criterion, "a": a, "b": b, "split": split, "seed": seed}
        return Comparison.model_validate(
            self._call("GET", f"projects/{slug}/compare", params=params)
        )

    def estimate(self, slug: str, criterion: str, judge: str, *, split: str = "all",
                 slice: str | None = None, assume_random_labels: bool = False,
                 alpha: float | None = None, half_width: float | None = None) -> Estimates:  # fmt: skip
        """A criterion's true score through `judge`: the same document as `manage.py estimate
        --format json` (docs/estimates.md); held-out (and all) figures are a recorded look."""
        given = {"slice": slice, "alpha": alpha, "half_width": half_width}
        params = {"criterion": criterion, "judge": judge, "split": split,
                  "assume_random_labels": assume_random_labels,
                  **{k: v for k, v in given.items() if v is not None}}  # fmt: skip
        data = self._call("GET", f"projects/{slug}/estimates", params=params)
        return Estimates.model_validate(data)

    def score_predictions(self, slug: str, records: list[Mapping], **options: Any) -> ScoreRun:
        body = {"records": list(records), **options}
        return ScoreRun.model_validate(self._call("POST", f"projects/{slug}/score-runs", json=body))

    # --- judges and runs ---------------------------------------------------------------------

    def judges(self, slug: str) -> list[Judge]:
        return [Judge.model_validate(j) for j in self._call("GET", f"projects/{slug}/judges")]

    def judge_runs(self, slug: str) -> list[Run]:
        """Every judge run of the project, oldest first, with progress and cost."""
        return [Run.model_validate(r) for r in self._call("GET", f"projects/{slug}/runs")]

    def run_judge(self, slug: str, judge: str, split: str = "calibration", *,
                  version: int | None = None, limit: int | None = None, concurrency: int = 4,
                  budget_usd: float | None = None) -> Run:  # fmt: skip
        """Queue a run of `judge` (its latest version unless `version`) on `split`; the site's
        task worker runs it. Naming the held-out (or all) split here is the confirmation the
        page asks for, as on the command line: the look is recorded under your name."""
        body = RunIn(split=split, version=version, limit=limit, concurrency=concurrency,
                     confirm_held_out=split != "calibration").model_dump()  # fmt: skip
        if budget_usd is not None:
            body["budget_usd"] = budget_usd
        return Run.model_validate(
            self._call("POST", f"projects/{slug}/judges/{judge}/runs", json=body)
        )

    def run(self, slug: str, run_id: int) -> Run:
        return Run.model_validate(self._call("GET", f"projects/{slug}/runs/{run_id}"))

    def cancel_run(self, slug: str, run_id: int) -> Run:
        return Run.model_validate(self._call("POST", f"projects/{slug}/runs/{run_id}/cancel"))

    def resume_run(self, slug: str, run_id: int) -> Run:
        return Run.model_validate(self._call("POST", f"projects/{slug}/runs/{run_id}/resume"))

    # --- row exports -------------------------------------------------------------------------

    def export_rows(self, slug: str, kind: str) -> Iterator[dict[str, Any]]:
        """Every row of `kind` (items, answers, resolutions, approvals, audit, calls,
        verdicts, labels) as dicts, read from a streamed JSONL body as it arrives."""
        params = {"kind": kind, "format": "jsonl"}
        with self.http.stream("GET", f"projects/{slug}/rows", params=params) as response:
            _raise_for(response)
            for line in response.iter_lines():
                if line:
                    yield json.loads(line)

    def export_dataframe(self, slug: str, kind: str, *, library: str | None = None):
        """The rows as a pandas DataFrame (or polars, when pandas is absent or
        `library="polars"`)."""
        rows = list(self.export_rows(slug, kind))
        if library in (None, "pandas"):
            try:
                import pandas
            except ImportError:
                if library == "pandas":
                    raise
            else:
                return pandas.DataFrame.from_records(rows)
        try:
            import polars
        except ImportError:
            raise ImportError(
                "export_dataframe needs pandas or polars: pip install 'evalsite-client[pandas]'"
            ) from None
        return polars.from_dicts(rows, infer_schema_length=None)
