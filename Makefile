# Two commands matter: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test test-fast check install migrate bench clean messages compilemessages

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("Python 3.11+ is required, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

migrate: $(STAMP)
	$(BIN)/python manage.py ensuredb
	$(BIN)/python manage.py migrate --noinput

# Services (embedded unless DATABASE_URL / REDIS_URL are set), migrations, demo data, workers,
# scheduler and web, supervised until Ctrl-C; all state in var/demo.
demo: $(STAMP)
	$(BIN)/python -m devtools.demo --state var/demo --host $(HOST) --port $(PORT)

# The suite runs on embedded PostgreSQL and Redis in a temporary folder, unless servers are named
# for it in LATENCY_TEST_DATABASE_URL / LATENCY_TEST_REDIS_URL (it creates and drops databases and
# flushes its Redis database there). DATABASE_URL / REDIS_URL are never used by the tests.
# The suite is spread over XDIST worker processes (pytest-xdist; each has its own database, Redis database and
# channel prefix: devtools/pytest_workers.py); `make test XDIST=0` runs it in one process. loadgroup keeps
# the tests that share an expensive session fixture (the region host's venv) on one worker.
XDIST ?= 3
XDIST_ARGS = -n $(XDIST) --dist loadgroup
test: check
	$(BIN)/python -m devtools.embedded run --tests -- $(BIN)/python -m pytest $(XDIST_ARGS) $(PYTEST_ARGS)

# The in-process layer only: no browser, no processes of the tests' own, no deploy units, nothing slow
# (markers in pyproject.toml, applied in tests/conftest.py).
FAST_MARKERS := not browser and not e2e and not deploy and not slow
test-fast: check
	$(BIN)/python -m devtools.embedded run --tests -- $(BIN)/python -m pytest $(XDIST_ARGS) -m "$(FAST_MARKERS)" $(PYTEST_ARGS)

# Lint, format and type check (configured in pyproject.toml); `make test` runs it first.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python bench/probe_accuracy.py
	$(BIN)/python bench/probe_capacity.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache

# Re-extract the translatable strings into locale/zh_Hans (needs GNU gettext), then translate the new
# entries and run `make compilemessages`; tests/web/test_every_string_of_ours_is_in_the_catalog.py fails
# while a string is missing.
MESSAGE_IGNORES := --ignore=.venv --ignore=tests --ignore=devtools --ignore=bench --ignore=static/vendor --ignore=staticfiles --ignore=var --ignore=test-artifacts
messages: $(STAMP)
	$(BIN)/python manage.py makemessages -l zh_Hans $(MESSAGE_IGNORES)
	$(BIN)/python manage.py makemessages -d djangojs -l zh_Hans $(MESSAGE_IGNORES)

compilemessages: $(STAMP)
	$(BIN)/python manage.py compilemessages -l zh_Hans --ignore=.venv
