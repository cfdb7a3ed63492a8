"""Make the Label Studio fixtures of tests/data/label_studio/ with Label Studio itself.

    .venv/bin/python -m bench._label_studio_fixtures [--port 8150]

Label Studio 1.x from PyPI (installed into var/bench/label-studio on first use, never into the
project's virtualenv: `bench._label_studio.installed`) runs on 127.0.0.1:PORT with a fresh data
folder and is driven through its REST API only, as a team would drive it: two users, a text
project whose label config holds Choices, Rating and TextArea controls, six tasks, annotations
by both users (both on one task, one task skipped, one empty annotation), predictions with a
model_version and a score, then its JSON and JSON_MIN exports. An Image project imports two
uploaded PNGs and one image by URL; its JSON export, its label config and the uploaded files
(from Label Studio's media folder) make `image_export.zip`, as a user would zip them. Written
files replace the old ones; `malformed.json` is hand-made (one task's annotation broken).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import secrets
import time
import zipfile
from pathlib import Path

import httpx
from PIL import Image

from bench._label_studio import LabelStudio, installed
from bench._servers import checked

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests/data/label_studio"
WORK = ROOT / "var/bench/label-studio-fixtures"
ADMIN = "ana@example.com"
SECOND = "ben@example.com"

TEXT_CONFIG = """<View>
  <Text name="question" value="$question"/>
  <Text name="answer" value="$answer"/>
  <Choices name="correct" toName="answer" choice="single">
    <Choice value="pass"/>
    <Choice value="fail"/>
  </Choices>
  <Rating name="quality" toName="answer" maxRating="5"/>
  <TextArea name="comment" toName="answer" maxSubmissions="1"/>
</View>"""
IMAGE_CONFIG = """<View>
  <Image name="image" value="$image"/>
  <Choices name="legible" toName="image">
    <Choice value="yes"/>
    <Choice value="no"/>
  </Choices>
</View>"""
TASKS = [
    {"question": "2 + 2?", "answer": "4", "reference": "4"},
    {"question": "Capital of France?", "answer": "Lyon", "reference": "Paris"},
    {"question": "Largest planet?", "answer": "Jupiter", "reference": "Jupiter"},
    {"question": "Boiling point of water at sea level, in C?", "answer": "90", "reference": "100"},
    {"question": "Author of Hamlet?", "answer": "Shakespeare", "reference": "Shakespeare"},
    {"question": "Square root of 81?", "answer": "9", "reference": "9"},
]


def result(correct: str | None = None, quality: int | None = None, comment: str | None = None):
    """An annotation's (or prediction's) result regions, as Label Studio's editor posts them."""
    regions = []
    if correct is not None:
        regions.append(_region("correct", "choices", {"choices": [correct]}))
    if quality is not None:
        regions.append(_region("quality", "rating", {"rating": quality}))
    if comment is not None:
        regions.append(_region("comment", "textarea", {"text": [comment]}))
    return regions


def _region(name: str, kind: str, value: dict) -> dict:
    return {
        "id": secrets.token_hex(5),
        "from_name": name,
        "to_name": "answer" if name != "legible" else "image",
        "type": kind,
        "value": value,
        "origin": "manual",
    }


# Per task (by position): Ana's annotation, Ben's, and the model's prediction. "skip" is a
# cancelled annotation (Label Studio's Skip button), "empty" one submitted with no result.
ANA = [
    result("pass", 5, "exact"),
    result("fail", 2, "wrong city"),
    result("pass", 4),
    "skip",
    result("pass", 5),
    "empty",
]
BEN = [result("pass", 4), result("fail", 1, "wrong city"), result("fail", 3), None, None, None]
BEN[4] = result("pass", 5)
PREDICTED = [
    (result("pass"), 0.92),
    (result("fail"), 0.81),
    (result("pass", 4), 0.66),
    (result("fail"), 0.7),
    (result("pass"), 0.95),
    (result("pass"), 0.58),
]


class Peer(LabelStudio):
    """The benchmark's Label Studio server, with a fresh data folder, on 127.0.0.1:port."""

    def __init__(self, port: int):
        super().__init__(WORK, port=port, user=ADMIN)

    def __enter__(self) -> Peer:
        super().__enter__()
        self.admin = self.api
        return self

    def second_user(self) -> httpx.Client:
        """Ben signs up through the sign-up page (he joins the one organization) and reads his
        own API token, as a new teammate would."""
        password = secrets.token_urlsafe(16)
        ben = httpx.Client(base_url=self.base, timeout=120, follow_redirects=True)
        page = ben.get("/user/signup/")
        form = {"email": SECOND, "password": password, "csrfmiddlewaretoken": _csrf(page.text)}
        checked(ben.post("/user/signup/", data=form, headers={"Referer": str(page.url)}), 200)
        token = checked(ben.get("/api/current-user/token"), 200).json()["token"]
        ben.close()
        return httpx.Client(
            base_url=self.base, timeout=120, headers={"Authorization": f"Token {token}"}
        )

    def project(self, title: str, config: str) -> int:
        body = {"title": title, "label_config": config, "maximum_annotations": 2}
        return checked(self.admin.post("/api/projects/", json=body), 201).json()["id"]

    def tasks(self, project: int) -> list[int]:
        listed = checked(self.admin.get(f"/api/tasks/?project={project}&page_size=100"), 200)
        return sorted(task["id"] for task in listed.json()["tasks"])

    def export(self, project: int, kind: str) -> bytes:
        """The project page's quick export: predictions as ids, annotators as user ids."""
        url = f"/api/projects/{project}/export?exportType={kind}&download_all_tasks=true"
        return checked(self.admin.get(url), 200).content

    def snapshot(self, project: int, kind: str = "JSON") -> bytes:
        """An export snapshot with predictions and annotators (their e-mail) written out in
        full and skipped annotations kept: what an import into another tool needs."""
        options = {
            "annotation_filter_options": {"usual": True, "skipped": True, "ground_truth": None},
            "serialization_options": {
                "predictions": {"only_id": False},
                "annotations__completed_by": {"only_id": False},
            },
        }
        made = checked(self.admin.post(f"/api/projects/{project}/exports/", json=options), 201)
        pk = made.json()["id"]
        for _ in range(120):
            status = checked(self.admin.get(f"/api/projects/{project}/exports/{pk}"), 200)
            if status.json()["status"] == "completed":
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"export snapshot {pk} did not complete: {status.json()}")
        url = f"/api/projects/{project}/exports/{pk}/download?exportType={kind}"
        return checked(self.admin.get(url), 200).content


def _csrf(page: str) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    if not found:
        raise RuntimeError("Label Studio's sign-up page has no CSRF token")
    return found.group(1)


def annotate(client: httpx.Client, task: int, given) -> None:
    if given is None:
        return
    body = {"result": [], "was_cancelled": given == "skip", "lead_time": 3.5}
    if isinstance(given, list):
        body["result"] = given
    checked(client.post(f"/api/tasks/{task}/annotations/", json=body), 201)


def text_project(peer: Peer, ben: httpx.Client) -> None:
    pk = peer.project("Evalsite fixtures: QA answers", TEXT_CONFIG)
    checked(peer.admin.post(f"/api/projects/{pk}/import", json=TASKS), 201)
    tasks = peer.tasks(pk)
    for task, ana_says, ben_says, (predicted, score) in zip(
        tasks, ANA, BEN, PREDICTED, strict=True
    ):
        annotate(peer.admin, task, ana_says)
        annotate(ben, task, ben_says)
        prediction = {"task": task, "result": predicted, "score": score, "model_version": "qa-v1"}
        checked(peer.admin.post("/api/predictions/", json=prediction), 201)
    (OUT / "text_label_config.xml").write_text(TEXT_CONFIG + "\n", encoding="utf-8")
    _write_json(OUT / "text_export.json", peer.snapshot(pk))
    _write_json(OUT / "text_export_quick.json", peer.export(pk, "JSON"))
    _write_json(OUT / "text_export_min.json", peer.export(pk, "JSON_MIN"))


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (24, 16), colour).save(out, format="PNG")
    return out.getvalue()


def image_project(peer: Peer) -> None:
    pk = peer.project("Evalsite fixtures: scans", IMAGE_CONFIG)
    # One form field per file: Label Studio reads one file per field name.
    files = {"file1": ("scan-red.png", _png((200, 30, 30)), "image/png"),
             "file2": ("scan-blue.png", _png((30, 30, 200)), "image/png")}  # fmt: skip
    checked(peer.admin.post(f"/api/projects/{pk}/import", files=files), 201)
    by_url = [{"image": "https://images.example.org/scans/scan-green.png"}]
    checked(peer.admin.post(f"/api/projects/{pk}/import", json=by_url), 201)
    for task, label in zip(peer.tasks(pk), ["yes", "no", "yes"], strict=True):
        region = {**_region("legible", "choices", {"choices": [label]})}
        annotate(peer.admin, task, [region])
    export = peer.snapshot(pk)
    tasks = json.loads(export)
    uploads = sorted({t["data"]["image"] for t in tasks if t["data"]["image"].startswith("/data/")})
    with zipfile.ZipFile(OUT / "image_export.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("export.json", json.dumps(tasks, indent=2, ensure_ascii=False) + "\n")
        zf.writestr("label_config.xml", IMAGE_CONFIG + "\n")
        for url in uploads:  # /data/upload/1/abc-scan.png is media/upload/1/abc-scan.png
            relative = url.removeprefix("/data/")
            zf.write(peer.data / "media" / relative, relative)


def _write_json(path: Path, body: bytes) -> None:
    path.write_text(json.dumps(json.loads(body), indent=2, ensure_ascii=False) + "\n")


def malformed() -> None:
    """The text export with one annotation's rating made a word: refused, naming task and field."""
    tasks = json.loads((OUT / "text_export.json").read_text())
    tasks[2]["annotations"][0]["result"][1]["value"]["rating"] = "four"
    (OUT / "malformed.json").write_text(json.dumps(tasks, indent=2, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8150)
    args = parser.parse_args(argv)
    available, version = installed()
    if not available:
        raise SystemExit(version)
    OUT.mkdir(parents=True, exist_ok=True)
    with Peer(args.port) as peer:
        ben = peer.second_user()
        text_project(peer, ben)
        image_project(peer)
    malformed()
    print(f"Label Studio {version}: wrote {', '.join(sorted(p.name for p in OUT.iterdir()))}")


if __name__ == "__main__":
    main()
