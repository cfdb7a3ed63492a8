# Evalsite: `make run` serves the demo, `make test` runs the whole suite.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEV_STAMP := $(VENV)/.installed-dev-stamp
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/evalsite
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install install-dev lock run serve test test-sqlite test-postgres bench lint chromium tesseract clean

# Exactly the locked versions, every file's hash checked: serving needs requirements.lock only;
# the tests add the dev extras (requirements-dev.lock). The code runs from the checkout.
install: $(STAMP)
install-dev: $(DEV_STAMP)

$(PY):
	python3 -m venv $(VENV)

# Then the client package from this checkout (its dependencies, httpx and pydantic, are locked
# above): the server's API schemas are its models (clients/python/README.md).
$(STAMP): requirements.lock clients/python/pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e clients/python
	touch $(STAMP)

$(DEV_STAMP): requirements-dev.lock clients/python/pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(PY) -m pip install --quiet --no-deps -e clients/python
	touch $(DEV_STAMP)

# After changing pyproject.toml's dependencies: `make lock`, then commit both lock files. The
# serving lock is resolved from the dev one, so both pin the same versions (`make run` after
# `make test` changes nothing); versions already pinned stay unless pyproject.toml excludes them.
PIP_COMPILE := $(PY) -m piptools compile --quiet --generate-hashes --allow-unsafe --strip-extras \
  --no-emit-index-url --no-emit-find-links
lock: install-dev
	$(PIP_COMPILE) --extra dev -o requirements-dev.lock pyproject.toml
	cp requirements-dev.lock requirements.lock
	$(PIP_COMPILE) -o requirements.lock pyproject.toml

# Development settings for this checkout (git-ignored): every `manage.py` command the README
# prints then works without exporting anything. Written once; edit it freely afterwards.
.env:
	printf '%s\n' '# Written by `make run` for local development (git-ignored); the environment wins over it.' \
	  '# A deployment has no .env: it sets DEBUG=false and SECRET_KEY in its environment.' 'DEBUG=true' > .env

# The embedded demo: SQLite under var/, DEBUG on, a task worker beside the web server.
# `make run PORT=8001` (or `PORT=8001 make run`) serves on another port; HOST likewise.
run: install .env
	DEBUG=true $(PY) manage.py migrate --noinput
	DEBUG=true $(PY) manage.py load_demo --if-empty
	@echo "Evalsite on http://$(HOST):$(PORT)/  (Ctrl-C stops the server and the task worker)"
	DEBUG=true $(PY) manage.py db_worker --queue-name '*' --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	DEBUG=true $(PY) manage.py runserver $(HOST):$(PORT)

# Production serving: gunicorn (static files through whitenoise) and a task worker, on PostgreSQL.
# Needs SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL=postgres://... (the site's role, which owns no
# table) and MIGRATE_DATABASE_URL=postgres://... (the tables' owner: migrations and grants only)
# in the environment (README, "Production"); refuses to start when `check --deploy` finds
# anything or the site's role could switch the history triggers off. Ctrl-C stops both.
WEB_WORKERS ?= $(shell echo $$((2 * $$(nproc) + 1)))
serve: install
	@case "$$DATABASE_URL" in postgres://*|postgresql://*) ;; \
	  *) echo "make serve needs DATABASE_URL=postgres://... (SQLite is for make run)" >&2; exit 1;; esac
	@[ -n "$$MIGRATE_DATABASE_URL" ] || { echo "make serve needs MIGRATE_DATABASE_URL=postgres://... \
	  (the tables' owner; DATABASE_URL's role owns nothing: docs/security.md)" >&2; exit 1; }
	$(PY) manage.py check --deploy --fail-level WARNING
	DATABASE_URL="$$MIGRATE_DATABASE_URL" $(PY) manage.py migrate --noinput
	$(PY) manage.py grant_app_role
	$(PY) manage.py check --database default --tag database --fail-level WARNING
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "Evalsite on http://$(HOST):$(PORT)/ ($(WEB_WORKERS) gunicorn workers and a task worker)"
	$(PY) manage.py db_worker --queue-name '*' --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(VENV)/bin/gunicorn evalsite.wsgi --config gunicorn.conf.py --bind $(HOST):$(PORT) \
	  --workers $(WEB_WORKERS) --access-logfile -

# Debian's Chromium drives the browser tests (never `playwright install`).
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: browser tests will be skipped (sudo apt-get install chromium)"; fi; }

# Debian's Tesseract reads the words on image evidence (click-a-word, quote highlights); without
# it images have no words and the OCR tests are skipped.
tesseract:
	@command -v tesseract >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq tesseract-ocr >/dev/null; \
	  else echo "tesseract is missing: images will have no words, OCR tests skip (sudo apt-get install tesseract-ocr)"; fi; }

# The two runs side by side, each printed whole when it ends (-O), each on TEST_WORKERS pytest
# processes (pytest-xdist; whole files to a worker, the longest first: tests/conftest.py
# LONG_FILES). The suite is CPU-bound: with one process per run the PostgreSQL one ended after
# 7 min and the SQLite one went on alone on one core to 12m35s; two workers each keep both cores
# busy to the end. From a clean clone on the quiet 2-core machine, venv install included:
# `CI=true make test` 9m10s (2026-12-02). Browser expectations wait up to 20 s for a busy machine.
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadfile
test: install-dev chromium tesseract
	@$(MAKE) --no-print-directory -j2 -O test-sqlite test-postgres

test-sqlite: install-dev
	$(PY) -m pytest -q $(XDIST)

# Again on PostgreSQL, the tests that use the database, browser tests aside (a test that
# touches no database, such as the formats, metrics and providers tests, gives the same result
# on any); required when CI=true.
test-postgres: install-dev
	@if $(PY) -c "import psycopg, sys; psycopg.connect('$(TEST_DATABASE_URL)'.rsplit('/', 1)[0] + '/postgres', connect_timeout=3).close()" 2>/dev/null; then \
	  DATABASE_URL=$(TEST_DATABASE_URL) $(PY) -m pytest -q $(XDIST) -m "not browser" --database-tests-only; \
	elif [ "$$CI" = true ]; then \
	  echo "PostgreSQL at $(TEST_DATABASE_URL) is not reachable, and CI requires it." >&2; exit 1; \
	else \
	  echo "PostgreSQL not reachable at $(TEST_DATABASE_URL): skipping the PostgreSQL run."; \
	fi

# Evalsite beside Label Studio (installed on first use into var/bench/, never into .venv) over
# loopback HTTP at 1k and 100k items, then the 16-rater load run: one table (bench/README.md).
# `make bench BENCH_ARGS="--sizes 1000"` for a quick pass; `python -m bench NAME` for the others.
BENCH_ARGS ?=
bench: install-dev
	$(PY) -m bench.side_by_side $(BENCH_ARGS)

lint: install-dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	DEBUG=true $(PY) manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) var tests/browser/artifacts
