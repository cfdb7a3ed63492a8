from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import JudgeVersion
from judging.services.judges.configs import JudgeConfigError
from judging.services.runs.prompts import prompt_sha256
from reviews.models import AppendOnlyError
from tests.judging.run_helpers import PROMPT, judge, labelled_project


@pytest.fixture
def labelled(project, tmp_path):
    return labelled_project(project, tmp_path, n=4)


def test_prompt_edit_is_a_new_version_with_its_sha(labelled):
    first = judge(labelled, "http://127.0.0.1:9/v1")
    same = judge(labelled, "http://127.0.0.1:9/v1")
    edited = judge(labelled, "http://127.0.0.1:9/v1", prompt=PROMPT + " Be strict.")
    assert (first.created, same.created, edited.created) == (True, False, True)
    assert same.version == first.version
    assert edited.version.number == 2
    assert edited.version.prompt_sha256 == prompt_sha256(PROMPT + " Be strict.")
    assert edited.version.judge.prompt_sha256 == edited.version.prompt_sha256


def test_versions_cannot_be_edited(labelled):
    version = judge(labelled, "http://127.0.0.1:9/v1").version
    version.prompt = "changed"
    with pytest.raises(AppendOnlyError):
        version.save()
    with pytest.raises(AppendOnlyError):
        JudgeVersion.objects.filter(pk=version.pk).update(prompt="changed")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"provider": "gemini"}, "provider:"),
        ({"criterion": "nope"}, "criterion: no criterion 'nope'"),
        ({"prompt": "Judge {{ secret }}"}, "unknown placeholder"),
        ({"prompt": "x" * 100_001}, "100,001 characters"),
        ({"api_key_env": "sk-live-abc"}, "api_key_env:"),
        ({"samples": 0}, "samples:"),
    ],
)
def test_bad_settings_name_the_setting_and_write_nothing(labelled, fields, message):
    with pytest.raises(JudgeConfigError, match=message):
        judge(labelled, "http://127.0.0.1:9/v1", **fields)
    assert not JudgeVersion.objects.exists()


def test_judge_config_command_as_the_issue_spells_it(labelled, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    out = StringIO()
    args = [
        "--project", labelled.slug, "--name", "strict", "--provider", "openai-compatible",
        "--base-url", "http://127.0.0.1:8001/v1", "--model", "stub", "--temperature", "0",
        "--samples", "3", "--criterion", "faithful", "--prompt-file", str(prompt),
        "--api-key-env", "STUB_KEY",
    ]  # fmt: skip
    call_command("judge_config", *args, stdout=out)
    assert f"saved new version v1 (prompt sha256 {prompt_sha256(PROMPT)})" in out.getvalue()
    call_command("judge_config", *args, stdout=out)
    assert "unchanged, still v1" in out.getvalue()
    version = JudgeVersion.objects.get()
    assert (version.samples, version.api_key_env) == (3, "STUB_KEY")
    with pytest.raises(CommandError, match="prompt"):
        call_command("judge_config", *args[:-4], "--prompt-file", str(tmp_path / "missing"))
