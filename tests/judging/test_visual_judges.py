"""Visual judges: the item's evidence pages go to the model as images, in each provider's wire
format, within the version's page cap; the call fingerprint covers the image bytes."""

import io
import json
from io import StringIO

import pytest
from django.core.management import call_command
from PIL import Image

from judging.models import Call, JudgeVersion, Run
from judging.providers import PROVIDERS
from judging.providers.images import ImageLimits, fit_image
from judging.services.runs.control import run_create
from judging.services.runs.evidence import RENDER_DPI
from judging.services.runs.prices import price_add
from judging.services.runs.runner import run_execute
from reviews.evidence import render_page
from reviews.models import Role
from tests.factories import member
from tests.helpers import bearer
from tests.judging.helpers import EXAMPLES, criterion_record, import_items, write_jsonl
from tests.judging.run_helpers import judge
from tests.judging.visual_helpers import (
    decoded,
    evidence_project,
    images_sent,
    pdf_bytes,
    png_bytes,
    text_sent,
)
from tests.judging.wire_server import Say, WireServer

PAGES = ("page one", "page two", "page three")
REPLY = '{"label": "pass", "confidence": 0.9}'


def _run(config, **options):
    run = run_create(config=config, split="all", confirm_held_out=True, **options)
    return run_execute(run)


def _by_item(wire: str, server: WireServer) -> dict[str, dict]:
    """Each request's body, by the item output its data block carried."""
    out = {}
    for request in server.requests:
        text = text_sent(wire, request["json"])
        data = json.loads(text.split("<data>", 1)[1].rsplit("</data>", 1)[0])
        out[data["output"]] = request["json"] | {"_data": data}
    return out


def _expected_pages(provider: str, pdf: bytes, n: int) -> list[bytes]:
    limits = PROVIDERS[provider].image_limits
    return [
        fit_image(render_page(pdf, p, dpi=RENDER_DPI), "image/png", limits)[0]
        for p in range(1, n + 1)
    ]


@pytest.mark.parametrize("wire", ["openai", "anthropic", "openai-compatible"])
def test_pages_go_as_images_in_each_providers_wire_format(project, tmp_path, wire):
    evidence_project(project, tmp_path, pages=PAGES)
    with WireServer(wire, [Say(REPLY)]) as server:
        config = judge(project, server.url, provider=wire, evidence="pages").config
        run = _run(config)
        sent = _by_item(wire, server)
    assert (run.status, run.done) == ("done", 3)
    doc = sent["the invoice total is 10"]
    images = images_sent(wire, doc)
    assert [media for media, _ in images] == ["image/png"] * 3
    assert [data for _, data in images] == _expected_pages(wire, pdf_bytes(*PAGES), 3)
    assert [decoded(data).format for _, data in images] == ["PNG"] * 3
    assert doc["_data"]["evidence_pages"] == ["doc.pdf p1", "doc.pdf p2", "doc.pdf p3"]
    assert doc["_data"]["evidence_pages_not_sent"] == []
    photo = images_sent(wire, sent["a red square"])
    assert len(photo) == 1 and decoded(photo[0][1]).size == (400, 300)
    assert decoded(photo[0][1]).getpixel((10, 10)) == (200, 30, 30)
    assert images_sent(wire, sent["no evidence here"]) == []
    stored = Call.objects.get(run=run, item__external_id="doc").request
    digests = [p["image_sha256"] for p in stored["parts"] if "image_sha256" in p]
    assert len(digests) == 3  # the request is stored with its images by digest, never bytes


def test_a_text_only_judge_sends_no_image_and_keeps_its_fingerprints(project, tmp_path):
    evidence_project(project, tmp_path)
    with WireServer("openai-compatible", [Say(REPLY)]) as server:
        _run(judge(project, server.url, name="text").config)
        visual = _run(judge(project, server.url, name="visual", evidence="pages").config)
        images = [len(images_sent("openai-compatible", r["json"])) for r in server.requests]
    assert sorted(images) == [0, 0, 0, 0, 1, 3]  # the visual judge asked again, with pages
    assert visual.done == 3 and visual.reused == 0


def test_the_cap_sends_the_first_pages_and_names_the_others(project, tmp_path):
    evidence_project(project, tmp_path, pages=("a", "b", "c", "d"))
    with WireServer("anthropic", [Say(REPLY)]) as server:
        config = judge(project, server.url, provider="anthropic", evidence="pages", max_pages=2)
        _run(config.config)
        doc = _by_item("anthropic", server)["the invoice total is 10"]
    images = images_sent("anthropic", doc)
    assert [data for _, data in images] == _expected_pages("anthropic", pdf_bytes(*"abcd"), 2)
    assert doc["_data"]["evidence_pages"] == ["doc.pdf p1", "doc.pdf p2"]
    assert doc["_data"]["evidence_pages_not_sent"] == ["doc.pdf p3", "doc.pdf p4"]
    assert "evidence_pages_not_sent names pages you were not shown" in doc["system"]


def test_the_fingerprint_covers_the_page_bytes(project, tmp_path):
    """Two items alike in every text but one page of their PDF: two calls for a visual judge,
    one stored call (one fingerprint) for a text-only judge."""
    for folder, total in (("a", "10"), ("b", "99")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "doc.pdf").write_bytes(pdf_bytes("same", f"total {total}"))
    records = [criterion_record()] + [
        {
            "type": "item",
            "item_id": name,
            "input": "q",
            "output": "o",
            "evidence": [f"{name}/doc.pdf"],
        }
        for name in ("a", "b")
    ]
    import_items(project, write_jsonl(tmp_path / "items.jsonl", records))
    with WireServer("openai-compatible", [Say(REPLY)]) as server:
        visual = _run(judge(project, server.url, name="visual", evidence="pages").config)
        text = _run(judge(project, server.url, name="text").config)
    assert visual.done == 2 and Call.objects.filter(run=text).count() == 1
    a, b = (Call.objects.get(run=visual, item__external_id=n) for n in "ab")
    assert a.fingerprint != b.fingerprint
    assert a.request["parts"][:2] == b.request["parts"][:2]  # the same text and first page
    assert a.request["parts"][2] != b.request["parts"][2]  # the second page's bytes differ


def test_images_are_fitted_to_the_providers_limits(project, tmp_path):
    (tmp_path / "wide.png").write_bytes(png_bytes(size=(3200, 800)))
    records = [criterion_record(), {"type": "item", "item_id": "w", "evidence": ["wide.png"]}]
    import_items(project, write_jsonl(tmp_path / "items.jsonl", records))
    with WireServer("anthropic", [Say(REPLY)]) as server:
        _run(judge(project, server.url, provider="anthropic", evidence="pages").config)
        [(media, data)] = images_sent("anthropic", server.requests[0]["json"])
    assert media == "image/png" and decoded(data).size == (1568, 392)


def test_fit_image_falls_back_to_jpeg_then_smaller_when_png_is_too_large():
    out = io.BytesIO()
    Image.effect_noise((600, 600), 120).convert("RGB").save(out, "PNG")  # hardly compresses
    limits = ImageLimits(max_side=2048, max_bytes=150_000)
    data, media = fit_image(out.getvalue(), "image/png", limits)
    assert media == "image/jpeg" and len(data) <= 150_000
    assert decoded(data).format == "JPEG" and 100 < decoded(data).size[0] <= 600
    small = png_bytes(size=(100, 50))
    assert fit_image(small, "image/png", limits) == (small, "image/png")  # fits: sent as is


def test_cited_sends_only_the_pages_the_claims_cite(project, tmp_path):
    """The example review file cites pages 1 and 2 of its statement; `cited` sends those."""
    import_items(project, EXAMPLES / "statement-0912.review.json")
    import_items(project, write_jsonl(tmp_path / "c.jsonl", [criterion_record()]))
    pdf = (EXAMPLES / "statement-0912.pdf").read_bytes()
    with WireServer("openai-compatible", [Say(REPLY)]) as server:
        _run(judge(project, server.url, evidence="cited").config)
        [request] = server.requests
    images = images_sent("openai-compatible", request["json"])
    assert [data for _, data in images] == _expected_pages("openai-compatible", pdf, 2)
    data = json.loads(text_sent("openai-compatible", request["json"]).split("<data>")[1][:-8])
    assert data["evidence_pages"] == ["statement-0912.pdf p1", "statement-0912.pdf p2"]


def test_evidence_mode_is_part_of_the_version_and_of_its_judge(project, tmp_path):
    evidence_project(project, tmp_path)
    url = "http://127.0.0.1:8001/v1"
    v1 = judge(project, url).version
    v2 = judge(project, url, evidence="pages").version
    v3 = judge(project, url, evidence="pages", max_pages=3).version
    same = judge(project, url, evidence="pages", max_pages=3)
    assert [v.number for v in (v1, v2, v3)] == [1, 2, 3] and not same.created
    assert len({v1.judge_id, v2.judge_id, v3.judge_id}) == 3  # verdicts never mixed
    assert JudgeVersion.objects.get(pk=v3.pk).evidence == "pages"


def test_judge_config_command_takes_the_evidence_options(project, tmp_path):
    evidence_project(project, tmp_path)
    prompt = tmp_path / "p.txt"
    prompt.write_text("Faithful? {{ labels }}")
    call_command(
        "judge_config", "--project", project.slug, "--name", "v", "--provider",
        "openai-compatible", "--model", "stub", "--criterion", "faithful", "--prompt-file",
        str(prompt), "--evidence", "pages", "--max-pages", "5", "--timeout", "30",
        "--retries", "2", "--concurrency", "3", stdout=StringIO(),
    )  # fmt: skip
    version = JudgeVersion.objects.get(config__name="v")
    settings = (version.evidence, version.max_pages, version.timeout_seconds)
    assert settings + (version.max_retries, version.concurrency) == ("pages", 5, 30, 2, 3)
    run = run_create(config=version.config, split="all", confirm_held_out=True)
    assert Run.objects.get(pk=run.pk).concurrency == 3  # the version's, unless a run says


def test_the_api_saves_a_visual_judge_and_starts_a_run_with_a_budget(client, project, tmp_path):
    evidence_project(project, tmp_path)
    price_add(provider="openai-compatible", model="stub", input_per_million=1000,
              output_per_million=1000)  # fmt: skip
    headers = bearer(member(project, Role.ADMIN))
    url = f"/api/projects/{project.slug}/judges"
    with WireServer("openai-compatible", [Say(REPLY)]) as server:
        body = {"name": "v", "provider": "openai-compatible", "model": "stub",
                "prompt": "{{ labels }}", "criterion": "faithful", "base_url": server.url,
                "evidence": "pages", "max_pages": 4}  # fmt: skip
        made = client.post(url, body, content_type="application/json", headers=headers)
        assert made.status_code == 201
        [version] = made.json()["versions"]
        assert (version["evidence"], version["max_pages"], version["concurrency"]) == (
            "pages", 4, 4,
        )  # fmt: skip
        again = client.post(url, body, content_type="application/json", headers=headers)
        assert again.status_code == 200 and len(again.json()["versions"]) == 1
        bad = client.post(url, body | {"max_pages": 0}, content_type="application/json",
                          headers=headers)  # fmt: skip
        assert bad.status_code == 422 and "max_pages" in bad.json()["error"]["reason"]
        runs = f"{url}/v/runs"
        run = {"split": "all", "confirm_held_out": True, "budget_usd": 0.02}
        started = client.post(runs, run, content_type="application/json", headers=headers)
        assert started.status_code == 201, started.content
        listed = client.get(f"/api/projects/{project.slug}/runs", headers=headers).json()
    [row] = listed
    # Two pages at $1,000 per million tokens: the first call alone could cost more than $0.02.
    assert (row["status"], row["calls"], row["budget_usd"]) == ("budget_reached", 0, 0.02)
    assert row["evidence"] == "pages" and "the first call could cost up to $" in row["error"]


def test_compare_judges_puts_text_only_and_visual_side_by_side(project, tmp_path):
    evidence_project(project, tmp_path)
    with WireServer("openai-compatible", [Say(REPLY)]) as server:
        _run(judge(project, server.url, name="text").config)
        _run(judge(project, server.url, name="visual", evidence="pages").config)
    args = ["--project", project.slug, "--criterion", "faithful", "--a", "text@1", "--b",
            "visual@1", "--split", "all"]  # fmt: skip
    out = StringIO()
    call_command("compare_judges", *args, "--format", "json", stdout=out)
    report = json.loads(out.getvalue())
    sides = (report["a"]["evidence"], report["b"]["evidence"])
    assert sides == ("text only", "pages (at most 8 a call)")
    assert (report["a"]["n_judged"], report["b"]["n_judged"]) == (3, 3)
    [evidence] = [s for s in report["settings"] if s["setting"] == "evidence"]
    assert evidence["changed"]
    out = StringIO()
    call_command("compare_judges", *args, "--format", "markdown", stdout=out)
    assert "| text@1 | openai-compatible/stub | text only | 3 |" in out.getvalue()
