# The two commands a newcomer needs: `make run` (the site with its worker and beat) and `make test`.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# axe-core and the Nu HTML checker for the browser tests (npm's registry; Node and Java come with the machine).
NODE_STAMP := node_modules/.installed
# Where the embedded default keeps its database, mail, broker folders and secret (settings read it too).
VAR_DIR ?= $(CURDIR)/var
export VAR_DIR

# `make run`'s one port: the printed URL, SITE_URL (the email links) and the web process (honcho
# hands PORT to the Procfile's first process, `web`) all come from it. `PORT=8001 make run`.
PORT ?= 8000
SITE_URL ?= http://127.0.0.1:$(PORT)
VAR_FOLDERS := $(addprefix $(VAR_DIR)/,mail celery/queue celery/processed celery/control cache static)

.PHONY: run run-processes serve test setup lint types pytest bench bench-tools clean lock cluster

$(STAMP): pyproject.toml requirements.lock
	@test -x $(PY) || $$(bin/find-python) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c requirements.lock -e '.[dev]'
	@touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	@touch $(NODE_STAMP)

setup: $(STAMP)
	@mkdir -p $(VAR_FOLDERS)

# Both shipped courses, so every page, job and email meets more than one course.
run: setup
	$(PY) manage.py migrate --no-input
	$(PY) manage.py import_course content/gpus-tpus-ai-hardware
	$(PY) manage.py import_course content/serving-on-a-budget
	$(PY) manage.py seed_workload_cards
	$(PY) manage.py seed_demo
	@$(MAKE) --no-print-directory run-processes

# The site, its worker and beat on PORT (tests/ops/test_make_run.py starts this very target).
# honcho's -p gives the web process PORT (the worker PORT+100, beat PORT+200: unused).
run-processes:
	@[[ "$(PORT)" =~ ^[0-9]{4,5}$$ ]] && (( $(PORT) >= 1024 && $(PORT) <= 65335 )) \
		|| { echo "PORT must be a whole number from 1024 to 65335, not '$(PORT)'" >&2; exit 2; }
	@mkdir -p $(VAR_FOLDERS)
	@echo "Site: $(SITE_URL)/   (mail lands in $(VAR_DIR)/mail/ unless EMAIL_URL is set)"
	SITE_URL=$(SITE_URL) PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/honcho start -f Procfile -p $(PORT)

# Production on one machine: the same code with production values (DJANGO_ENV=production,
# SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL, REDIS_URL, EMAIL_URL), gunicorn behind your proxy,
# a worker per queue and the beat (Procfile.production). WEB_CONCURRENCY sets the web workers.
serve: setup
	DJANGO_ENV=$${DJANGO_ENV:-production} $(PY) manage.py check --deploy --fail-level WARNING
	DJANGO_ENV=$${DJANGO_ENV:-production} $(PY) manage.py migrate --no-input
	DJANGO_ENV=$${DJANGO_ENV:-production} $(PY) manage.py collectstatic --no-input --verbosity 0
	DJANGO_ENV=$${DJANGO_ENV:-production} PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/honcho start -f Procfile.production

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

types: setup
	$(VENV)/bin/mypy .

pytest: setup $(NODE_STAMP)
	$(VENV)/bin/pytest $(PYTEST_ARGS)

test: lint types pytest

# bench/web.py drives the server with wrk, a Debian package (not on PyPI).
bench-tools:
	@command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }

bench: setup bench-tools
	$(PY) bench/run_all.py $(BENCH)

# The production topology on this host, one network namespace per node (proxy, two web nodes, two
# worker nodes, beat, PostgreSQL, Redis), a web node and a worker node killed mid-run; the last line
# is the verdict. Needs root (namespaces); HAProxy comes from Debian. Not part of `make test`.
cluster: setup
	@command -v haproxy >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null; }
	$(PY) -m ops.cluster $(CLUSTER)

lock:
	$(PY) -m pip freeze --exclude-editable | grep -v '^-e' > requirements.lock

clean:
	rm -rf $(VAR_DIR)/celery $(VAR_DIR)/cache $(VAR_DIR)/mail
