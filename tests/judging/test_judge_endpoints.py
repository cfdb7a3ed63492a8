"""A project admin cannot point the server at internal hosts or send its secrets as a key."""

import pytest

from judging.models import JudgeVersion, Run, RunStatus
from judging.services.judges.configs import JudgeConfigError
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
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
        ({"base_url": "http://169.254.169.254/latest"}, "host '169.254.169.254' port 80 is not"),
        ({"base_url": "http://127.0.0.1:5432/v1"}, "host '127.0.0.1' port 5432 is not allowed"),
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
    settings.JUDGE_ALLOWED_HOSTS = ["llm.internal:9000"]
    assert judge(labelled, "http://llm.internal:9000/v1", name="d").created


@pytest.mark.parametrize(
    ("allowed", "url", "ok"),
    [
        # A bare host is its web ports only: not the database nor the site's own admin on it.
        (["127.0.0.1"], "http://127.0.0.1/v1", True),
        (["127.0.0.1"], "https://127.0.0.1/v1", True),
        (["127.0.0.1"], "http://127.0.0.1:5432/v1", False),
        (["127.0.0.1"], "http://127.0.0.1:8000/admin/", False),
        (["127.0.0.1"], "http://127.0.0.1:9000/v1", False),
        # host:port is that port only, in either scheme; not the host's web ports.
        (["127.0.0.1:9000"], "http://127.0.0.1:9000/v1", True),
        (["127.0.0.1:9000"], "https://127.0.0.1:9000/v1", True),
        (["127.0.0.1:9000"], "http://127.0.0.1:9001/v1", False),
        (["127.0.0.1:9000"], "http://127.0.0.1/v1", False),
        (["LLM.internal:443"], "https://llm.INTERNAL/v1", True),
        (["[::1]:9000"], "http://[::1]:9000/v1", True),
        (["[::1]:9000"], "http://[::1]:5432/v1", False),
        (["::1"], "http://[::1]/v1", True),
        (["::1"], "http://[::1]:5432/v1", False),
    ],
)
def test_an_allowed_host_allows_its_listed_port_only(labelled, settings, allowed, url, ok):
    settings.JUDGE_ALLOWED_HOSTS = allowed
    if ok:
        assert judge(labelled, url).created
    else:
        with pytest.raises(JudgeConfigError, match=r"port \d+ is not allowed.*JUDGE_ALLOWED"):
            judge(labelled, url)
        assert not JudgeVersion.objects.exists()


@pytest.mark.parametrize("entry", ["127.0.0.1:", "127.0.0.1:http", "127.0.0.1:70000", ":80"])
def test_a_malformed_allowed_host_is_named(labelled, settings, entry):
    settings.JUDGE_ALLOWED_HOSTS = [entry]
    with pytest.raises(JudgeConfigError, match=f"JUDGE_ALLOWED_HOSTS: '{entry}' is not a host"):
        judge(labelled, "http://127.0.0.1:9/v1")


def test_a_run_rechecks_the_endpoint_when_the_operator_narrowed_it(labelled, settings):
    settings.JUDGE_ALLOWED_HOSTS = ["llm.internal:9000"]
    config = judge(labelled, "http://llm.internal:9000/v1").config
    run = run_create(config=config, split="all", limit=None, concurrency=1, confirm_held_out=True)
    settings.JUDGE_ALLOWED_HOSTS = ["llm.internal"]  # the web ports only now
    with pytest.raises(Exception, match="not allowed"):
        run_execute(run)
    run = Run.objects.get(pk=run.pk)
    assert run.status == RunStatus.FAILED
    assert "host 'llm.internal' port 9000 is not allowed" in run.error
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
