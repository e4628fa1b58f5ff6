# Two commands on a fresh machine: `make run` and `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
PYTHON ?= python3

NODE_STAMP := tests/mcp/node_modules/.installed

.PHONY: install prepare run test lint docs browser node bench loadtest dist clean

# What serving needs (`make run`), then the dev and bench extras on top (`make test`, `make bench`), a line per step.
# CPU torch first: the pinned wheel on this machine's disk, not a multi-GB CUDA build. --no-compile: Python compiles a
# module when it is first imported; byte-compiling every module of torch and the extras up front was most of a first
# `make run` (`python -m bench.firststart --command make-run`). PYTHONWARNINGS=ignore: setuptools warns of editable
# installs in a 10-line box per package, nothing a user can act on.
$(RUN_STAMP): pyproject.toml clients/python/pyproject.toml
	@echo "make: a virtual environment in $(VENV), with pip up to date"
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) install --quiet --upgrade pip
	@echo "make: torch 2.13.0 for the CPU"
	@$(PIP) install --quiet --no-compile torch==2.13.0
	@echo "make: ctxsieve and its client package, editable, with what serving needs"
	@PYTHONWARNINGS=ignore $(PIP) install --quiet --no-compile -e . -e clients/python
	@touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	PYTHONWARNINGS=ignore $(PIP) install --quiet --no-compile -e '.[dev,bench]' -e clients/python
	touch $(STAMP)

install: $(STAMP)

prepare: install
	$(VENV)/bin/ctxsieve prepare

# No `prepare` first: serve answers within seconds on a first start and prepares the rest in the background.
# --own: your own service, as `ctxsieve service start` runs it (on loopback it may read your home folder).
run: $(RUN_STAMP)
	@echo "make: serving with $(VENV)/bin/ctxsieve serve --own (Ctrl-C stops it; $(VENV)/bin/ctxsieve is the command line)"
	@HF_HUB_OFFLINE=1 exec $(VENV)/bin/ctxsieve serve --own

# mypy cannot follow the editable install's import hook, so it reads the packages through links named as installed.
lint: install
	$(VENV)/bin/ruff check .
	@mkdir -p $(VENV)/mypy-src/ctxsieve
	@for p in ingest indexes service; do ln -sfn ../../../$$p $(VENV)/mypy-src/ctxsieve/$$p; done
	$(VENV)/bin/mypy

# The docs site (mkdocs.yml): --strict fails on a broken link or anchor and on a page left out of the nav; the
# site goes to build/site, which is not tracked.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

# The third-party MCP servers and tools the gateway's tests run (server-filesystem, the MCP Inspector, the
# conformance suite, and Node 22 from npm's node package), pinned by tests/mcp/package-lock.json.
$(NODE_STAMP): tests/mcp/package.json tests/mcp/package-lock.json
	npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

node: $(NODE_STAMP)

# Headless Chromium for the inspector page's test (Debian's packages; skipped where apt-get is not ours).
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else echo "chromium is not installed: the inspector test will be skipped"; fi; fi

# Two workers, a test file each at a time (--dist loadfile keeps a file's fixtures on one worker): most tests wait on
# processes (the agents' CLIs, MCP servers, a service's niced background preparation), so the suite takes about half
# as long.
test: lint docs browser node prepare
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -n 2 --dist loadfile --durations=15

# Quality and speed against the peers named in the issues, on ../shared/data; about 70 minutes on 2 cores the
# first time (chunk vectors for the recall sets are then kept in ~/.cache/ctxsieve/bench; a vector depends only
# on the model and the text, so keeping them changes no figure). bench.agents (the real Claude Code and Codex CLIs,
# per scenario and surface) and bench.hooks (the hooks' latency) write their own files under bench/results.
bench: prepare node
	mkdir -p bench/results
	HF_HUB_OFFLINE=1 $(PY) -m bench.speed 2>/dev/null | tee bench/results/speed.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.recall --store $(HOME)/.cache/ctxsieve/bench/recall-qdrant 2>/dev/null \
		| tee bench/results/recall.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.tools 2>/dev/null | tee bench/results/tools.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.collections 2>/dev/null | tee bench/results/collections.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.gateway 2>/dev/null | tee bench/results/gateway.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.frameworks 2>/dev/null | tee bench/results/frameworks.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.compact 2>/dev/null | tee bench/results/compact.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.code --budgets 1000,1500,2000,3000 --default --peers 2>/dev/null \
		| tee bench/results/code.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.proxy --sessions 12 2>/dev/null | tee bench/results/proxy-own.txt
	HF_HUB_OFFLINE=1 $(PY) -m bench.agents 2>/dev/null
	HF_HUB_OFFLINE=1 $(PY) -m bench.hooks 2>/dev/null

# 32 clients on loopback for 5 minutes (filter, refs, re-filter, tools, collections), then 20 s of deliberate
# overload; latency and the server's RSS per 30 s window. About 8 minutes with setup.
loadtest: prepare
	mkdir -p bench/results
	HF_HUB_OFFLINE=1 $(PY) -m bench.loadtest 2>/dev/null | tee bench/results/loadtest.txt

# Wheels of the service and of the light client in build/dist (build/ is not tracked). The ctxsieve wheel alone gives
# every command (it carries the light client): uv tool install --compile-bytecode --find-links /opt/wheels
# build/dist/ctxsieve-0.1.0-py3-none-any.whl; the light client's wheel is for machines that run only hooks, the proxy
# or the gateway against a service elsewhere.
dist: install
	rm -rf build/dist build/lib build/bdist.* clients/python/build
	$(PIP) wheel --quiet --no-deps --no-build-isolation -w build/dist . ./clients/python
	rm -rf build/lib build/bdist.* clients/python/build
	@ls build/dist

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build
