"""A WSGI application for tests/test_gunicorn_worker.py: `/slow` answers after SLOW_SECONDS,
anything else at once; each answers with the process id that served it."""

import os
import time

SLOW_SECONDS = 2.0


def app(environ, start_response):
    if environ["PATH_INFO"] == "/slow":
        time.sleep(SLOW_SECONDS)
    body = str(os.getpid()).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
