"""evalsite.static_storage: whitenoise's manifest storage, each file's URL worked out once; a
new manifest (collectstatic) gives the new URLs, and a name it lacks still fails."""

import pytest

from evalsite.static_storage import StaticFilesStorage


def _collected(storage, files: dict[str, str], folder) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    found = {name: (storage, name) for name in files}
    for _name, _hashed, processed in storage.post_process(found, dry_run=False):
        assert not isinstance(processed, Exception), processed


def test_a_url_is_kept_until_the_next_manifest(tmp_path):
    storage = StaticFilesStorage(location=tmp_path, base_url="/static/")
    _collected(storage, {"css/site.css": "body { color: black }"}, tmp_path)
    first = storage.url("css/site.css")
    assert first.startswith("/static/css/site.") and first != "/static/css/site.css"
    assert storage.url("css/site.css") == first

    _collected(storage, {"css/site.css": "body { color: navy }"}, tmp_path)
    assert storage.url("css/site.css") not in (first, "/static/css/site.css")


def test_a_name_missing_from_the_manifest_fails_every_time(tmp_path):
    storage = StaticFilesStorage(location=tmp_path, base_url="/static/")
    _collected(storage, {"a.css": "a {}"}, tmp_path)
    for _ in range(2):
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry"):
            storage.url("missing.css")
