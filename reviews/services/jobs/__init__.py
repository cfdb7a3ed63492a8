"""Long operations as background jobs (reviews.models.Job): what kinds there are (registry),
starting and running one (records, run), and its progress and heartbeat (progress)."""
