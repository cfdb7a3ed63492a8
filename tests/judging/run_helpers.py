"""Builders for the judge-run tests: a project with items, human labels and a drawn split."""

import json

from judging.services.calibration.splits import split_draw
from judging.services.judges.configs import JudgeSettings, judge_config_save
from tests.judging.helpers import (
    criterion_record,
    human_record,
    import_items,
    item_record,
    write_jsonl,
)

PROMPT = "Is the answer faithful to the reference? Labels: {{ labels }}."


def labelled_project(project, tmp_path, n=10, criterion=None):
    """n items `i00`...; `output` contains `reference` on even items (humans say pass there)."""
    records = [criterion_record(**(criterion or {}))]
    for i in range(n):
        records.append(
            item_record(
                f"i{i:02}",
                input=f"q{i}",
                output=f"answer {i}",
                reference=f"answer {i}" if i % 2 == 0 else "other",
            )
        )
        records.append(human_record(f"i{i:02}", "rita", "pass" if i % 2 == 0 else "fail"))
    import_items(project, write_jsonl(tmp_path / "items.jsonl", records))
    split_draw(actor=None, project=project, seed=1, held_out_fraction=0.5)
    return project


def judge(project, url, name="j", prompt=PROMPT, provider="openai-compatible", **fields):
    settings = JudgeSettings(
        provider=provider,
        model=fields.pop("model", "stub"),
        prompt=prompt,
        criterion=fields.pop("criterion", "faithful"),
        base_url=url,
        **fields,
    )
    return judge_config_save(project=project, name=name, settings=settings)


def sent_data(request_body: dict) -> dict:
    """The JSON between <data> tags in a Chat Completions request."""
    user = request_body["messages"][-1]["content"][0]["text"]
    return json.loads(user.split("<data>", 1)[1].rsplit("</data>", 1)[0])
