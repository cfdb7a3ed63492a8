"""gunicorn's settings for `make serve` (and any gunicorn started in this folder: gunicorn reads
./gunicorn.conf.py by default). Command-line options (`--workers`, `--bind`) override these.

A slow or stalled client must not hold the server: threads (gthread) so one stalled request
takes one thread, not a whole worker process; a request body that stops arriving is given up
after REQUEST_BODY_TIMEOUT seconds (evalsite/body_timeout.py, in the WSGI application); a
connection that sends nothing is deferred to the worker's poller and dropped after `keepalive`.
Put a reverse proxy in front for slow request headers (nginx's client_header_timeout), which
gunicorn reads without a timeout.
"""

import os

# gthread, taking a new connection only while a thread is free (evalsite/gunicorn_worker.py):
# connections then spread over the workers by how busy each is.
worker_class = "evalsite.gunicorn_worker.BalancedThreadWorker"
threads = int(os.environ.get("WEB_THREADS", "4"))
# A worker whose main loop stops beating for this long is restarted.
timeout = 30
graceful_timeout = 10
keepalive = 5

# Behind TRUSTED_PROXIES reverse proxies the connection's address (`%(h)s`) is the last proxy's:
# the access log shows the forwarded chain too, whose entry TRUSTED_PROXIES from the right is
# the client (the address the password throttle uses, evalsite/client_address.py).
if int(os.environ.get("TRUSTED_PROXIES", "0") or "0"):
    access_log_format = (
        '%(h)s for="%({x-forwarded-for}i)s" %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"'
    )
