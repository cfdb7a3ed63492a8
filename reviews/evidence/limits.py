"""Limits and defaults of the evidence package, read lazily from Django settings.

Django is optional: a limit not passed in explicitly is ``settings.<NAME>`` when Django is
configured, else the default here, so the package works in plain Python too.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_PAGES = 500
# Decoded pixels allowed for an image (per page/frame). 50 MP is an A4 scan at ~720 dpi and
# ~150 MB as RGB; Pillow's own guard (Image.MAX_IMAGE_PIXELS, 89.5 MP by default) still applies
# on top: the effective limit is the smaller of the two.
DEFAULT_MAX_PIXELS = 50_000_000
# dpi is clamped to MIN_DPI..MAX_DPI and rounded to a whole number (so 150.4 and 150 share one
# cache entry). Viewers should request a handful of zoom steps, e.g. DPI_STEPS.
MIN_DPI = 36
MAX_DPI = 400
DEFAULT_DPI = 150
DPI_STEPS = (72, 100, 150, 200, 300)
# Upper bound on a rendered bitmap: a (legal) 200 x 200 inch PDF page at 400 dpi would be 6.4
# gigapixels. Beyond this the zoom is reduced to fit; boxes still scale by image/page width.
MAX_RENDER_PIXELS = 40_000_000
FORMATS = ("png", "webp")


def setting(name: str, default):
    """``settings.<name>`` if Django is configured, else ``default`` (read lazily)."""
    try:
        from django.conf import settings

        return getattr(settings, name, default)
    except Exception:  # Django not installed or settings not configured
        return default


def default_cache_dir() -> Path:
    """``settings.EVIDENCE_CACHE_DIR``, else ``MEDIA_ROOT/renders``."""
    configured = setting("EVIDENCE_CACHE_DIR", None)
    if configured:
        return Path(configured)
    media_root = setting("MEDIA_ROOT", None)
    if media_root:
        return Path(media_root) / "renders"
    raise RuntimeError(
        "No render cache folder: pass cache_dir= or set EVIDENCE_CACHE_DIR / MEDIA_ROOT"
    )
