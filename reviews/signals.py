"""Signals other apps may listen to, so reviews never has to import them."""

from django.dispatch import Signal

# Sent (after commit) when human labels or imported data of a project changed:
# kwargs `project`. Judging recomputes its dashboards on it.
project_data_changed = Signal()

# Sent (after commit) when a background job was started: kwargs `job`. reviews.tasks queues
# it for the worker (services never import tasks).
job_queued = Signal()

# Sent (after commit) when webhook deliveries were written: kwargs `delivery_pks`. Reviews'
# AppConfig queues them for the task worker (services never import tasks).
webhook_deliveries_queued = Signal()
