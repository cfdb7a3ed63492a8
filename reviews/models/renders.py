"""The render cache's index: which page images (and OCR word lists) are stored, how big they
are and when they were last used, so the cache can stay under EVIDENCE_CACHE_MAX_BYTES by
evicting the least recently used. Shared by every web server and worker through the database."""

from django.db import models


class CachedRender(models.Model):
    """One cached file in storage (``name``). A cache, not history: rows come and go."""

    name = models.CharField(max_length=200, unique=True)
    size_bytes = models.PositiveBigIntegerField()
    used_at = models.DateTimeField(db_index=True)

    def __str__(self):
        return self.name
