"""Each provider against a local server speaking its wire format (no internet)."""

import pytest

from judging.formats.replies import criterion_schema, parse_criterion
from judging.providers import ModelRequest, Part, ProviderError, make_provider
from tests.judging.wire_server import Hang, Raw, Say, Status, WireServer

WIRES = ["openai", "anthropic", "openai-compatible"]
LABELS = ["pass", "fail"]
PNG = b"\x89PNG\r\n\x1a\nfake"


def request():
    return ModelRequest(
        system="Judge the answer.",
        parts=(Part(text="<item>data</item>"), Part(image=PNG, media_type="image/png")),
        schema=criterion_schema(LABELS),
        temperature=0,
    )


def provider(server, sleeps=None, **options):
    options.setdefault("max_retries", 2)
    return make_provider(
        server.wire,
        model="judge-1",
        base_url=server.url,
        timeout=options.pop("timeout", 5),
        sleep=(sleeps.append if sleeps is not None else lambda s: None),
        **options,
    )


@pytest.mark.parametrize("wire", WIRES)
def test_success_gives_text_and_tokens(wire):
    with WireServer(wire, [Say('{"label": "pass", "confidence": 0.9}', tokens=(120, 8))]) as srv:
        reply = provider(srv).complete(request())
    assert parse_criterion(reply.text, LABELS).reply.label == "pass"
    assert (reply.input_tokens, reply.output_tokens, reply.attempts) == (120, 8, 1)


@pytest.mark.parametrize("wire", WIRES)
def test_structured_output_and_image_sent_in_each_wire_format(wire):
    with WireServer(wire, [Say('{"label": "pass"}')]) as srv:
        provider(srv).complete(request())
    sent = srv.requests[0]["json"]
    if wire == "openai":
        assert srv.requests[0]["path"] == "/v1/responses"
        assert sent["text"]["format"]["type"] == "json_schema"
        assert sent["input"][0]["content"][1]["image_url"].startswith("data:image/png;base64,")
    elif wire == "anthropic":
        assert srv.requests[0]["path"] == "/v1/messages"
        assert sent["tool_choice"] == {"type": "tool", "name": "criterion_verdict"}
        assert sent["messages"][0]["content"][1]["source"]["media_type"] == "image/png"
    else:
        assert srv.requests[0]["path"] == "/v1/chat/completions"
        assert sent["response_format"]["json_schema"]["name"] == "criterion_verdict"
        assert sent["messages"][1]["content"][1]["type"] == "image_url"


@pytest.mark.parametrize("wire", WIRES)
def test_malformed_json_is_unparsed_with_raw_text(wire):
    with WireServer(wire, [Say("I think it passes {label: pass")]) as srv:
        reply = provider(srv).complete(request())
    parsed = parse_criterion(reply.text, LABELS)
    assert parsed.reply is None and "no JSON object" in parsed.error
    assert "I think it passes" in reply.text


@pytest.mark.parametrize("wire", WIRES)
def test_broken_envelope_keeps_the_raw_body(wire):
    with WireServer(wire, [Raw(b'{"unexpected": tru')]) as srv:
        reply = provider(srv).complete(request())
    assert reply.text == '{"unexpected": tru'
    assert parse_criterion(reply.text, LABELS).reply is None


@pytest.mark.parametrize("wire", WIRES)
def test_schema_invalid_json_is_unparsed_naming_the_field(wire):
    with WireServer(wire, [Say('{"label": "maybe", "confidence": 0.5}')]) as srv:
        reply = provider(srv).complete(request())
    parsed = parse_criterion(reply.text, LABELS)
    assert parsed.reply is None and parsed.error.startswith("label:")


@pytest.mark.parametrize("wire", WIRES)
def test_429_then_success_honours_retry_after(wire):
    sleeps = []
    script = [Status(429, retry_after="3"), Say('{"label": "fail"}')]
    with WireServer(wire, script) as srv:
        reply = provider(srv, sleeps).complete(request())
    assert parse_criterion(reply.text, LABELS).reply.label == "fail"
    assert len(srv.requests) == 2 and reply.attempts == 2
    assert sleeps == reply.waits and sleeps[0] >= 3


@pytest.mark.parametrize("wire", WIRES)
def test_500_is_retried_then_fails_with_the_status(wire):
    sleeps = []
    with WireServer(wire, [Status(500)]) as srv, pytest.raises(ProviderError) as err:
        provider(srv, sleeps, max_retries=2).complete(request())
    assert err.value.status == 500 and "after 3 attempts" in str(err.value)
    assert len(srv.requests) == 3 and len(sleeps) == 2


@pytest.mark.parametrize("wire", WIRES)
def test_400_is_not_retried(wire):
    with WireServer(wire, [Status(400)]) as srv, pytest.raises(ProviderError):
        provider(srv).complete(request())
    assert len(srv.requests) == 1


@pytest.mark.parametrize("wire", WIRES)
def test_timeout_is_retried_then_reported(wire):
    with WireServer(wire, [Hang(1.0)]) as srv, pytest.raises(ProviderError) as err:
        provider(srv, timeout=0.2, max_retries=1).complete(request())
    assert "timed out" in str(err.value) and len(srv.requests) == 2


@pytest.mark.parametrize("wire", WIRES)
def test_ten_megabyte_reply_is_cut_at_the_cap(wire):
    huge = b'{"label": "' + b"x" * (10 * 1024 * 1024) + b'"}'
    with WireServer(wire, [Raw(huge)]) as srv:
        reply = provider(srv, max_reply_bytes=64 * 1024).complete(request())
    assert reply.truncated and len(reply.text) == 64 * 1024


@pytest.mark.parametrize("wire", WIRES)
def test_key_comes_from_the_named_env_var_and_is_never_shown(wire, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY_FOR_TEST", "sk-secret-123")
    with WireServer(wire, [Status(401)]) as srv:
        prov = provider(srv, api_key_env="JUDGE_KEY_FOR_TEST")
        with pytest.raises(ProviderError) as err:
            prov.complete(request())
    headers = {k.lower(): v for k, v in srv.requests[0]["headers"].items()}
    assert "sk-secret-123" in (headers.get("authorization", "") + headers.get("x-api-key", ""))
    assert "sk-secret-123" not in str(err.value) + repr(prov) + str(vars(prov))


def test_missing_key_env_var_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    prov = make_provider("openai", model="m", api_key_env="NO_SUCH_KEY_VAR")
    with pytest.raises(ProviderError, match="NO_SUCH_KEY_VAR is not set"):
        prov.complete(request())


def test_unknown_provider_names_the_choices():
    with pytest.raises(ProviderError, match="openai-compatible"):
        make_provider("gemini", model="m")
