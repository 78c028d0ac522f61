VENV := .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: browser-deps run migrate test test-unit test-integration test-e2e test-browser check check-fast lint typecheck fmt bench bench-quick bench-bees bench-profile bench-online documents fuzz faults leaks race screenshots citus-up citus-down test-citus race-citus bench-citus

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,embedded,tracing]'
	touch $@

run: $(VENV)/.installed
	$(PY) -m service serve

migrate: $(VENV)/.installed
	$(PY) -m service migrate

# axe-core for the accessibility scan (tests/browser/test_accessibility.py), from its lock file;
# without npm the scan fails and says how to install it.
AXE := tests/browser/node_modules/.package-lock.json
$(AXE): tests/browser/package-lock.json
	-npm ci --prefix tests/browser --no-audit --no-fund

# The browser tests (tests/browser/) need Debian's Chromium at /usr/bin/chromium; without it
# they are skipped, and both this line and pytest's summary say so in red.
# The suite runs on TEST_WORKERS processes (pytest-xdist), each with its own database; a test
# waits on clocks, servers and the browser more than it computes: two take 0.62 of the time here.
TEST_WORKERS ?= 2
test: $(VENV)/.installed $(AXE)
	@test -x /usr/bin/chromium || printf '\033[1;31m%s\033[0m\n' \
	  "WARNING: /usr/bin/chromium is missing: the browser tests will be SKIPPED (apt-get install chromium)"
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal

# The same suite in tiers, by folder (tests/unit/test_tiers.py checks that every test folder is
# in exactly one): unit (the pure domain, the in-memory store and moves played on it: seconds, no
# database: SWARM_TESTS_WITHOUT_DATABASE makes a test that asks for one fail), integration (the
# store and use cases on a real PostgreSQL), e2e (the app over HTTP, in process or as real
# processes, the contract, faults, the online bench's smoke), browser (the board in Chromium).
UNIT_TESTS := tests/unit
INTEGRATION_TESTS := tests/integration
E2E_TESTS := tests/e2e tests/contract tests/ops tests/faults tests/bench
BROWSER_TESTS := tests/browser
CITUS_TESTS := tests/citus

# The unit tier leaves out the tests marked `slow` (Hypothesis properties over whole games, whole
# games of the bees that search, a pytest in a subprocess): `make test` runs them. It writes
# bytecode even where PYTHONDONTWRITEBYTECODE is set: rewriting the asserts again every run costs
# seconds of the tier's time.
test-unit: $(VENV)/.installed
	SWARM_TESTS_WITHOUT_DATABASE=1 PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -m "not slow" $(UNIT_TESTS)

test-integration: $(VENV)/.installed
	$(PY) -m pytest -q $(INTEGRATION_TESTS)

test-e2e: $(VENV)/.installed
	$(PY) -m pytest -q $(E2E_TESTS)

test-browser: $(VENV)/.installed $(AXE)
	@test -x /usr/bin/chromium || printf '\033[1;31m%s\033[0m\n' \
	  "WARNING: /usr/bin/chromium is missing: the browser tests will be SKIPPED (apt-get install chromium)"
	$(PY) -m pytest -q $(BROWSER_TESTS)

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# mypy, strict, on service/ and tests/ (pyproject.toml).
typecheck: $(VENV)/.installed
	$(PY) -m mypy

check: lint typecheck test

# Lint, typecheck and the unit tier: what to run before every commit (seconds, no database).
check-fast: lint typecheck test-unit

fmt: $(VENV)/.installed
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# Benchmarks (docs/benchmarks.md): every figure a ratio against a baseline measured in the same
# run, interleaved, 5 rounds, median and min-max (~4 min). GAMES=1,10,100 adds online runs of
# that many concurrent games (tests/bench/loadgen.py).
bench: $(VENV)/.installed
	$(PY) -m tests.bench.bench $(if $(GAMES),--games $(GAMES))
	$(PY) -m tests.bench.bees

# The bee levels' strength against each other, MCS(100) and the arena's MCSAgent, decision CPU,
# a person's wait at a table of expert bees, then each level's rating on the people's scale
# (docs/benchmarks.md, "Bee players"; ~20 min, then ~10, on an idle 2-core machine).
bench-bees: $(VENV)/.installed
	$(PY) -m tests.bench.bees
	$(PY) -m tests.bench.level_ratings

# The same figures in 2 rounds of short slices (~1 min).
bench-quick: $(VENV)/.installed
	$(PY) -m tests.bench.bench --quick

# As `bench`, plus py-spy sampling the service in an extra 8-client submitMove slice.
bench-profile: $(VENV)/.installed
	$(PY) -m tests.bench.bench --profile $(if $(GAMES),--games $(GAMES))

# Concurrent online games with the load from several generator processes (docs/benchmarks.md,
# "Online games"): LEVELS (default 25,100,200,400,1000 games: up to and past capacity) in one
# run, per level moves offered and answered, refusals, clocks, streams cut, each side's CPU
# share. ONLINE_ARGS passes more options (python -m tests.bench.online -h).
# (Not $(or $(LEVELS),25,…): make splits its arguments at the commas, so that ran 25 alone.)
LEVELS ?= 25,100,200,400,1000
bench-online: $(VENV)/.installed
	$(PY) -m tests.bench.online --levels $(LEVELS) $(ONLINE_ARGS)

# Fault injection at full scale (tests/faults/, docs/scaling.md): SIGKILL mid-game, PostgreSQL
# restarted and slowed under the service. `make test` runs a short smoke of the same tests.
faults: $(VENV)/.installed
	rm -f $${TMPDIR:-/tmp}/swarm-fault-summary.txt
	SWARM_FAULTS=full $(PY) -m pytest -q -m fault tests/faults
	cat $${TMPDIR:-/tmp}/swarm-fault-summary.txt

documents: $(VENV)/.installed
	$(PY) -m service documents

# schemathesis at volume: 10,000 generated requests per generation mode; and 1,000 names drawn
# from the document's pattern (60 in `make test`).
fuzz: $(VENV)/.installed
	SCHEMATHESIS_EXAMPLES=10000 $(PY) -m pytest -q tests/contract/test_schemathesis.py
	SWARM_NAME_EXAMPLES=1000 $(PY) -m pytest -q tests/unit/test_names.py

# The leak test at volume: 200 random online games instead of the 12 in `make test`.
leaks: $(VENV)/.installed
	SWARM_LEAK_GAMES=200 $(PY) -m pytest -q tests/e2e/test_online_leaks.py

# Eight people racing their moves on two instances, over enough games for 1,000+ moves (issue 19);
# `make test` races 2 games.
race: $(VENV)/.installed
	SWARM_RACE_GAMES=7 $(PY) -m pytest -q -s tests/e2e/test_racing_moves.py

# Regenerate the board's screenshots in docs/board/ (shown in the README) by playing it in
# Chromium against a throw-away database; then the ratings' places (tests/browser/rating_shots.py:
# My games, the leaderboard by rating, the profile, a rated game's end and replay, Play now).
browser-deps: $(AXE)

screenshots: $(VENV)/.installed
	$(PY) -m tests.browser.screenshots
	$(PY) -m tests.browser.rating_shots

# A Citus cluster (a coordinator and two workers, each in a network namespace of its own when
# run as root, else on ports of 127.0.0.1; deploy/citus-cluster.sh): needs Debian's PostgreSQL 15
# with Citus 13 (../shared/citus/build.sh builds it). `deploy/citus-cluster.sh env` prints its
# DATABASE_URL.
citus-up:
	deploy/citus-cluster.sh up

citus-down:
	deploy/citus-cluster.sh down

# The Citus tier (tests/citus, docs/scaling.md "The store on Citus"): the store's contract
# suites, the e2e game flows, the clock thread, a race, every write counted single-shard by
# Citus, faults across hosts and a rebalance with online games on the clock, on the
# cluster above (started if it is not running). `make test` runs only its smoke
# (tests/citus/test_smoke.py), which skips, in red, without a cluster.
test-citus: $(VENV)/.installed
	deploy/citus-cluster.sh up
	SWARM_CITUS_TIER=1 SWARM_RACE_GAMES=$${SWARM_RACE_GAMES:-1} $(PY) -m pytest -q $(CITUS_TESTS)

# `make race` on the cluster (tests/citus/test_race.py): seven games raced on two instances,
# over 1,000 moves; `make test-citus` races one.
race-citus: $(VENV)/.installed
	deploy/citus-cluster.sh up
	SWARM_CITUS_TIER=1 SWARM_RACE_GAMES=7 $(PY) -m pytest -q -s tests/citus/test_race.py

# Appends a second on Citus with one worker and with two against plain PostgreSQL, where each
# node's CPU goes, Citus' router share, and a move's p50/p99 over HTTP on Citus ÷ on plain, in
# one run (tests/bench/citus.py, docs/benchmarks.md "The store on Citus"; ~8 min) on the cluster
# above (started if it is not running) and a plain PostgreSQL of its own.
# CITUS_ARGS passes more options: --quick (one short round, ~2 min), --no-http, --clients N.
bench-citus: $(VENV)/.installed
	deploy/citus-cluster.sh up
	$(PY) -m tests.bench.citus $(CITUS_ARGS)
