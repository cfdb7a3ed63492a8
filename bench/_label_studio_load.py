"""bench/load.py's load on Label Studio: ``--raters`` annotators at once for ``--seconds``.

Each rater is a Label Studio user of its own (a legacy API token each, made before the clock
starts, as bench/load.py's raters sign in first) on its own connection, and loops: ``GET
/api/projects/{id}/next`` (the claim: Label Studio locks the task for that user), then ``POST
/api/tasks/{id}/annotations/`` (the save; Label Studio has no separate submit). A non-2xx answer
or an exception is an error, counted, and the rater goes on. Afterwards every task a rater was
given is read back through the API: lost = annotations confirmed (201) that are not stored,
over-assigned = tasks with more annotations than ``maximum_annotations`` (1).
Run from bench/side_by_side.py's load step, at a fresh project of ``items`` tasks.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import httpx

from bench._label_studio import RESULT
from bench._load_report import Clock, report

MAXIMUM_ANNOTATIONS = 1


class Annotator(threading.Thread):
    def __init__(self, client: httpx.Client, project: int, clock: Clock, ready, stats):
        super().__init__(daemon=True)
        self.client, self.project, self.clock, self.stats = client, project, clock, stats
        self.ready = ready  # a barrier: every rater is ready, then the clock starts
        self.tasks: set[int] = set()  # every task `next` gave this rater
        self.saved: list[int] = []  # annotation ids the server confirmed (201)
        self.errors: list[str] = []

    def _timed(self, kind: str, method: str, url: str, **kwargs) -> httpx.Response | None:
        start = time.perf_counter()
        try:
            response = self.client.request(method, url, **kwargs)
        except httpx.HTTPError as error:  # a timeout or a dropped connection: an error
            self.errors.append(f"{kind}: {error!r}")
            return None
        self.stats[kind].append((time.perf_counter() - start) * 1000)
        return response

    def run(self) -> None:
        try:
            self.ready.wait(timeout=600)
            self._work()
        except Exception as error:  # reported, and the run fails
            self.ready.abort()
            self.errors.append(repr(error))
        finally:
            self.client.close()

    def _work(self) -> None:
        annotation = {"result": RESULT, "lead_time": 1.0}
        while time.monotonic() < self.clock.deadline:
            claim = self._timed("next", "GET", f"/api/projects/{self.project}/next")
            if claim is not None and claim.status_code == 404:
                return  # no task left for this rater
            if claim is None or claim.status_code != 200:
                if claim is not None:
                    self.errors.append(f"next: HTTP {claim.status_code}")
                continue
            task = claim.json()["id"]
            self.tasks.add(task)
            save = self._timed("save", "POST", f"/api/tasks/{task}/annotations/", json=annotation)
            if save is not None and save.status_code == 201:
                self.saved.append(save.json()["id"])
            elif save is not None:
                self.errors.append(f"task {task}: save HTTP {save.status_code}")


def _check(api: httpx.Client, raters: list[Annotator]) -> dict:
    """Lost and over-assigned according to what the server returns afterwards."""
    stored: set[int] = set()
    over = 0
    for task in sorted(set().union(*(r.tasks for r in raters))):
        response = api.get(f"/api/tasks/{task}/annotations/")
        response.raise_for_status()
        annotations = response.json()
        stored.update(a["id"] for a in annotations)
        over += len(annotations) > MAXIMUM_ANNOTATIONS
    lost = sum(1 for r in raters for pk in r.saved if pk not in stored)
    return {"lost": lost, "over_assigned": over, "errors": [e for r in raters for e in r.errors]}


def run(api: httpx.Client, project: int, tokens: list[str], seconds: float, **client) -> dict:
    """The load on `project` (its tasks imported, maximum_annotations 1), one rater per token;
    `api` is an admin's client, `client` more httpx.Client options (a test's transport).
    Prints bench/load.py's report and returns its figures."""
    stats: dict[str, list[float]] = defaultdict(list)
    clock = Clock(seconds)
    ready = threading.Barrier(len(tokens), action=clock.start)
    raters = [
        Annotator(
            httpx.Client(
                base_url=api.base_url,
                timeout=120,  # as bench/load.py: a loaded machine makes a request wait
                headers={"Authorization": f"Token {token}"},
                **client,
            ),
            project,
            clock,
            ready,
            stats,
        )
        for token in tokens
    ]
    for rater in raters:
        rater.start()
    for rater in raters:
        rater.join(seconds + 600)
    elapsed = clock.elapsed_s
    answers = sum(len(r.saved) for r in raters)
    print(
        f"{len(tokens)} raters, Label Studio (its own server, SQLite), maximum_annotations "
        f"{MAXIMUM_ANNOTATIONS}: {answers} answers in {elapsed:.1f} s (tokens made before, "
        "not counted)"
    )
    return report("label_studio_load", stats, answers, elapsed, _check(api, raters))
