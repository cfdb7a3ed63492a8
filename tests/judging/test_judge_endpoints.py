"""A project admin cannot point the server at internal hosts or send its secrets as a key."""

import pytest

from judging.models import JudgeVersion, Run, RunStatus
from judging.services.judge_configs import JudgeConfigError
from judging.services.runner import run_execute
from judging.services.runs import run_create
from tests.factories import member
from tests.judging.run_helpers import PROMPT, judge, labelled_project


@pytest.fixture
def labelled(project, tmp_path, settings):
    settings.JUDGE_ALLOWED_HOSTS = []  # the production default
    settings.JUDGE_API_KEY_ENVS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
    return labelled_project(project, tmp_path, n=2)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"base_url": "http://169.254.169.254/latest"}, "host '169.254.169.254' is not allowed"),
        ({"base_url": "http://127.0.0.1:5432/v1"}, "host '127.0.0.1' is not allowed"),
        ({"base_url": "http://db.internal/v1"}, "JUDGE_ALLOWED_HOSTS"),
        ({"base_url": "https://user:pw@api.openai.com/v1"}, "no user name or password"),
        ({"base_url": "file:///etc/passwd"}, "only http:// or https://"),
        ({"api_key_env": "SECRET_KEY"}, "api_key_env: 'SECRET_KEY' is not one of"),
        ({"api_key_env": "DATABASE_URL"}, "JUDGE_API_KEY_ENVS"),
    ],
)
def test_refused_endpoints_name_the_setting_and_save_nothing(labelled, fields, message):
    fields = {"base_url": "", **fields}
    with pytest.raises(JudgeConfigError, match=message):
        judge(labelled, fields.pop("base_url"), **fields)
    assert not JudgeVersion.objects.exists()


def test_provider_defaults_and_listed_hosts_are_allowed(labelled, settings):
    assert judge(labelled, "", name="a").created
    assert judge(labelled, "http://127.0.0.1:8001/v1", name="b").created  # the stub's default
    assert judge(labelled, "https://api.openai.com/v1", name="c", api_key_env="OPENAI_API_KEY")
    settings.JUDGE_ALLOWED_HOSTS = ["llm.internal"]
    assert judge(labelled, "http://llm.internal:9000/v1", name="d").created


def test_a_run_rechecks_the_endpoint_when_the_operator_narrowed_it(labelled, settings):
    settings.JUDGE_ALLOWED_HOSTS = ["llm.internal"]
    config = judge(labelled, "http://llm.internal:9000/v1").config
    run = run_create(config=config, split="all", limit=None, concurrency=1, confirm_held_out=True)
    settings.JUDGE_ALLOWED_HOSTS = []
    with pytest.raises(Exception, match="not allowed"):
        run_execute(run)
    run = Run.objects.get(pk=run.pk)
    assert run.status == RunStatus.FAILED
    assert "host 'llm.internal' is not allowed" in run.error
    assert not run.calls.exists()


def test_judge_page_refuses_an_internal_base_url(labelled, client):
    admin = member(labelled, "admin")
    client.force_login(admin)
    response = client.post(
        f"/p/{labelled.slug}/judges/save/",
        {
            "name": "ssrf",
            "provider": "openai-compatible",
            "model": "m",
            "base_url": "http://10.0.0.1/v1",
            "api_key_env": "SECRET_KEY",
            "temperature": 0,
            "samples": 1,
            "prompt": PROMPT,
        },
        follow=True,
    )
    assert "is not allowed on this server" in response.content.decode()
    assert not JudgeVersion.objects.exists()
