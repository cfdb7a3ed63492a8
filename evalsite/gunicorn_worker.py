"""gunicorn's threaded worker (gthread), taking a new connection only while one of its threads is
free, so that connections spread over the workers by how busy each is.

Every gthread worker waits on the shared listening socket and accepts whenever it is woken,
busy or not: the new connection's request then queues behind the worker's running ones while
another worker may sit idle, and a browser's keep-alive connection stays with the worker that
took it. Under 16 raters on 4 workers, one worker did more than half of the work and another
7% (CPU per process, bench/README.md); a save waited behind the busy worker's queue.

This worker still holds any number of idle keep-alive connections and serves every request on
them; it only stops accepting new connections while each of its threads has a request, and a
free worker takes them instead. When every thread of every worker is busy, a new connection
waits in the kernel's queue rather than in one worker's, as it would with gunicorn's sync
workers. Hand-written: gunicorn has no setting for it (`worker_connections` caps held
connections, idle keep-alive ones included, which is another limit).
"""

from __future__ import annotations

from gunicorn.workers.gthread import ThreadWorker


class BalancedThreadWorker(ThreadWorker):
    """gthread, accepting new connections only while fewer than `threads` requests are in its
    threads. `in_threads` is kept by the main thread alone (both hooks run there): no lock."""

    def init_process(self):
        self.in_threads = 0  # connections handed to the pool whose request has not finished
        super().init_process()

    def enqueue_req(self, conn):
        self.in_threads += 1
        super().enqueue_req(conn)

    def finish_request(self, conn, fs):
        self.in_threads -= 1
        super().finish_request(conn, fs)

    def wait_for_and_dispatch_events(self, timeout):
        # gunicorn's loop turns accepting on and off by its connection count only; decided
        # again here, right before each wait. A stopping worker accepts nothing (run()).
        if self.alive:
            self.set_accept_enabled(
                self.nr_conns < self.worker_connections and self.in_threads < self.cfg.threads
            )
        super().wait_for_and_dispatch_events(timeout)
