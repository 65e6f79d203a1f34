# Two commands matter: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test test-fast test-images images check install lock worker-wheelhouse migrate bench bench-slos bench-status clean messages compilemessages settings-docs docs

# The locked versions (requirements/dev.txt: the site, the worker and the [dev] extra, with hashes), then the
# checkout itself, editable, with --no-deps: everything it needs came from the lock.
$(STAMP): pyproject.toml requirements/dev.txt
	@$(PYTHON) -c 'import sys; sys.exit("Python 3.11+ is required, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements/dev.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# Recompile requirements/*.txt from pyproject.toml's ranges (after adding or changing a dependency); versions
# already locked stay unless `make lock UPGRADE=1`. Needs the package registry.
lock: $(STAMP)
	$(BIN)/python -m devtools.lock $(if $(UPGRADE),--upgrade)

# What a region host installs (requirements/worker.txt and the package's wheel) as files in var/wheelhouse, so a
# region worker's venv can be built with --no-index (tests/boundaries, tests/regions_e2e). Needs the registry once.
worker-wheelhouse: $(STAMP)
	$(BIN)/python -m devtools.wheelhouse --dest var/wheelhouse

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
# The container images' tests (tests/images) build both images: `make test-images`, not `make test`, unless
# TEST_MARKERS= (empty) includes them.
TEST_MARKERS ?= not images
test: check
	$(BIN)/python -m devtools.embedded run --tests -- $(BIN)/python -m pytest $(XDIST_ARGS) -m "$(TEST_MARKERS)" $(PYTEST_ARGS)

# The container images (Containerfile, Containerfile.worker) built with buildah and run against the suite's services
# (tests/images): buildah and mmdebstrap installed from Debian's packages if missing, the Debian base bootstrapped
# once (cached in ~/.cache/latency-atlas/images), both images built, a migration, the web's /readyz and a region
# worker's measurement stored through the central ingest, all in containers.
test-images: $(STAMP)
	$(BIN)/python -m devtools.images
	$(BIN)/python -m devtools.embedded run --tests -- $(BIN)/python -m pytest -n 0 -m images tests/images $(PYTEST_ARGS)

# Both images in buildah's storage (the base bootstrapped if need be): latency-atlas:$(IMAGE_TAG) (central),
# latency-atlas-worker:$(IMAGE_TAG) and latency-atlas-demo:$(IMAGE_TAG) (the compose file's demo profile).
IMAGE_TAG ?= $(shell sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)
images: $(STAMP)
	$(BIN)/python -m devtools.images --central latency-atlas:$(IMAGE_TAG) --worker latency-atlas-worker:$(IMAGE_TAG) \
		--demo latency-atlas-demo:$(IMAGE_TAG)

# The in-process layer only: no browser, no processes of the tests' own, no deploy units, nothing slow
# (markers in pyproject.toml, applied in tests/conftest.py).
# One worker more than `make test`: these tests start nothing of their own, and many wait on the mock server's
# paced streams, so a fourth worker fills the cores those waits leave idle (docs/benchmarks.md, "The suite's layers").
FAST_MARKERS := not browser and not e2e and not deploy and not slow
FAST_XDIST ?= 4
test-fast: check
	$(BIN)/python -m devtools.embedded run --tests -- $(BIN)/python -m pytest -n $(FAST_XDIST) --dist loadgroup \
		-m "$(FAST_MARKERS)" $(PYTEST_ARGS)

# Lint, format and type check (configured in pyproject.toml); `make test` runs it first.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The configuration reference (docs/reference/configuration.md) and deploy/*.env.example, generated from the one
# list of settings, probes/conf/catalog.py; tests/settings_catalog fails while they differ from it.
settings-docs: $(STAMP)
	$(BIN)/python manage.py settings_reference --write

# The documentation site (mkdocs.yml, pages in docs/) into var/docs-site; --strict fails on any warning, a broken
# link or a page left out of the nav included. Open var/docs-site/index.html: it needs no network.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --clean --quiet

bench: $(STAMP)
	$(BIN)/python bench/probe_accuracy.py
	$(BIN)/python bench/probe_capacity.py

# Service level objectives at scale (bench/slos.py): 20 objectives over 10 M rows in a database of its own, on the
# embedded servers unless DATABASE_URL / REDIS_URL name others. Not in `make bench` nor `make test`: it loads for
# long. SLOBENCH_ROWS=300000 make bench-slos for a short run.
bench-slos: $(STAMP)
	$(BIN)/python -m devtools.embedded run -- $(BIN)/python bench/slos.py $(BENCH_ARGS)

# Status pages under load (issue 49): one page and its badges at 200 requests/s for 30 s. Not in `make bench`.
bench-status: $(STAMP)
	$(BIN)/python -m devtools.embedded run -- $(BIN)/python bench/status.py $(BENCH_ARGS)

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
