"""Judging's API routers, mounted under /api/projects by `evalsite/api_urls.py` beside reviews'
(reviews never imports judging): score runs, judges and their runs, the agreement report and
comparisons, true scores. Same access rules as the pages; schemas are the client package's models."""

from ninja import Router

from judging.api import estimates, judges, reports, scores

router = Router()
router.add_router("", scores.router)
router.add_router("", judges.router)
router.add_router("", reports.router)
router.add_router("", estimates.router)

__all__ = ["router"]
