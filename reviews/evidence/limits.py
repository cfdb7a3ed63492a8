"""Limits and defaults of the evidence package, read lazily from Django settings.

Django is optional: a limit not passed in explicitly is ``settings.<NAME>`` when Django is
configured, else the default here, so the package works in plain Python too.
"""

from __future__ import annotations

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_PAGES = 500
# Decoded pixels allowed for an image (per page/frame). 50 MP is an A4 scan at ~720 dpi and
# ~150 MB as RGB; Pillow's own guard (Image.MAX_IMAGE_PIXELS, 89.5 MP by default) still applies
# on top: the effective limit is the smaller of the two.
DEFAULT_MAX_PIXELS = 50_000_000
# Pages are rendered at these resolutions only (the viewer's zoom steps; 36 is the thumbnail
# strip), so a member cannot make the server render and store every dpi of every page.
ZOOM_DPIS = (36, 72, 100, 150, 200, 300)
THUMBNAIL_DPI = 36
DEFAULT_DPI = 150
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


def check_dpi(dpi: object) -> int:
    """``dpi`` as an int if it is one of ZOOM_DPIS, else ValueError naming the allowed ones."""
    if isinstance(dpi, int) and not isinstance(dpi, bool) and dpi in ZOOM_DPIS:
        return dpi
    allowed = ", ".join(map(str, ZOOM_DPIS))
    raise ValueError(f"dpi {dpi!r} is not a zoom level (one of {allowed})")
