# The two quick-start commands: `make demo` and `make test`. Both make their own .venv.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO_ENV := DEBUG=1
PORT ?= 8000
TEST_WORKERS ?= 2

.PHONY: demo test test-fast lint format venv dev-venv clean

$(VENV)/.runtime: requirements.txt
	@echo "Installing the requirements into $(VENV) (once; with an empty pip cache this downloads every package)…"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt $(VENV)/.runtime
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

venv: $(VENV)/.runtime
dev-venv: $(VENV)/.dev

demo: $(VENV)/.runtime
	$(DEMO_ENV) $(PY) manage.py rundemo --port $(PORT)

# The suite in TEST_WORKERS processes (pytest-xdist; 0 runs it in this one), then the tests marked `serial` (they
# restart PostgreSQL or Redis under everyone else) alone; pytest's 5, "no test selected", is not a failure there.
test: $(VENV)/.dev
	DEBUG=$${DEBUG:-1} $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not serial" $(PYTEST_ARGS)
	DEBUG=$${DEBUG:-1} $(PY) -m pytest -m serial $(PYTEST_ARGS) || [ $$? -eq 5 ]

# The pure cores alone (no database, server or browser; marked by conftest.py): under half a minute.
test-fast: $(VENV)/.dev
	DEBUG=$${DEBUG:-1} $(PY) -m pytest -q -p no:cacheprovider -m "pure and not slow" $(PYTEST_ARGS)

# Style, then the layering and the one seam between the apps (contracts in .importlinter).
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

format: $(VENV)/.dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

clean:
	rm -rf $(VENV) var staticfiles
