"""whitenoise's compressed manifest storage, with each static file's URL worked out once.

Every page asks for five static URLs (base.html), and the manifest storage works each out anew:
the manifest look-up, a URL join and quoting, about a tenth of the page's template time. The
manifest is read when the storage is made and does not change while the process runs
(`collectstatic` writes a new one; the servers restart to serve it), so the URL a name gets
is kept. A name missing from the manifest still raises, and is not kept.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._urls: dict[str, str] = {}

    def url(self, name, force=False):
        if force:
            return super().url(name, force)
        try:
            return self._urls[name]
        except KeyError:
            url = self._urls[name] = super().url(name)
            return url

    def post_process(self, *args, **kwargs):
        self._urls.clear()  # collectstatic: the URLs of the manifest it is writing
        yield from super().post_process(*args, **kwargs)
