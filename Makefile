# Two commands matter: `make demo` and `make test`. Both build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test install migrate bench clean

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

demo: migrate
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@echo "Latency Atlas: http://$(HOST):$(PORT)/"
	$(BIN)/uvicorn latency.asgi:application --host $(HOST) --port $(PORT)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/probe_accuracy.py
	$(BIN)/python bench/probe_capacity.py

clean:
	rm -rf $(VENV) staticfiles .pytest_cache
