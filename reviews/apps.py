from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_link_triggers(sender, using, **kwargs):
    """SQLite drops a table's triggers when a migration rebuilds it: put them back."""
    from django.db import connections

    from reviews import link_triggers

    link_triggers.ensure_triggers(connections[using])


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Reviews"
    # Append-only: database triggers refuse UPDATE and DELETE (evalsite/history_triggers.py).
    history_tables = (
        "reviews_answer",
        "reviews_resolution",
        "reviews_resolutionsource",
        "reviews_approval",
        "reviews_reference",
        "reviews_event",
        "reviews_trustedkey",
        "reviews_keyrevocation",
        "reviews_goldmark",
        "reviews_itemrevision",
        "reviews_projectevent",
        "reviews_webhookattempt",
    )

    def ready(self):
        from django.conf import settings

        from reviews.formats import limits

        post_migrate.connect(_ensure_link_triggers, sender=self, dispatch_uid="reviews-links")
        # The readers in reviews.formats know no Django: hand them the configured limits.
        limits.configure(
            limits.Limits(**{f: getattr(settings, name) for f, name in limits.SETTINGS.items()})
        )
        # Reviews' formats and its `item` record kind join the import registry
        # (services/imports/registry.py); the order they are offered in is their `rank`,
        # whichever module loads first.
        from reviews.services.imports import files, records, review_files  # noqa: F401

        _item_actions_register()
        _jobs_register()
        from reviews import tasks
        from reviews.signals import job_queued, webhook_deliveries_queued

        job_queued.connect(tasks.job_queued_enqueue, dispatch_uid="reviews-job-queued")
        webhook_deliveries_queued.connect(
            tasks.webhook_deliveries_enqueue, dispatch_uid="reviews-webhooks"
        )


def _jobs_register():
    """Reviews' own job kinds besides the bulk actions: a row export past EXPORT_INLINE_MAX rows
    and the ground-truth .zip past GROUND_TRUTH_INLINE_MAX items (their module says why they
    run in steps); the ground truth's for its exporters, admins and approvers."""
    from reviews.access import EXPORTERS
    from reviews.forms_inputs import GroundTruthExportForm, RowExportForm
    from reviews.reports.exports import NothingToExport
    from reviews.selectors_rows import RowExportError
    from reviews.services.jobs import exports
    from reviews.services.jobs.registry import JobKind, job_kind_add

    job_kind_add(JobKind(exports.KIND, "Row export", RowExportForm, exports.rows_export_write,
                         refusals=(RowExportError,), progress=True, in_steps=True))  # fmt: skip
    job_kind_add(JobKind(exports.GROUND_TRUTH_KIND, "Ground-truth export", GroundTruthExportForm,
                         exports.ground_truth_export_write,
                         refusals=(NothingToExport, RowExportError), progress=True,
                         roles=tuple(EXPORTERS), in_steps=True))  # fmt: skip


def _item_actions_register():
    """Reviews' bulk actions on the item list, registered as another app's would be."""
    from reviews import forms_items, item_choice, item_hooks
    from reviews.services import item_bulk

    item_hooks.CHOOSE = item_choice.items_matching

    for action in (
        item_hooks.BulkAction(
            "reopen", "Re-open", forms_items.ReopenForm, item_bulk.items_reopen_asked,
            help="ask their settled questions again",
            run_in_steps=item_bulk.items_reopen_asked,  # with `progress`: in steps
        ),
        item_hooks.BulkAction(
            "assign", "Assign", forms_items.AssignForm, item_bulk.items_assign,
            help="pre-assign the open ones to a rater",
        ),
        item_hooks.BulkAction(
            "add_to_batch", "Add to batch", forms_items.AddToBatchForm,
            item_bulk.items_add_to_batch, help="places for the batch's raters",
        ),
    ):  # fmt: skip
        item_hooks.action_register(action)
