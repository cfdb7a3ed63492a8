"""Webhooks: registering endpoints (hooks), emitting events into deliveries, sending them signed.

`webhook_event_emit` is the one way in for every app (judging calls it for runs and gates)."""
