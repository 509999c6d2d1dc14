# kcsim: `make run` starts a broker on 127.0.0.1:9092, `make test` runs the suite (the
# container tier too where a Docker engine answers or can be started), `make image` builds
# the Docker image, `make test-containers` installs and starts an engine (root) for the tier.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
SOURCES := face protocol coordinator storage server admin tools pipeline

.PHONY: install run test test-containers test-cluster image bench soak fuzz lint messages clean

# The folders install as kcsim's subpackages (pyproject.toml maps them). The editable
# install is strict: build/ holds a kcsim/ of links to each file, on a plain .pth path,
# which mypy and import-linter read as they read any installed package (the default
# mode's import hook they cannot follow). A file added, moved or removed needs a
# re-install, so the stamp depends on the list of the package's files, written again
# only when it changes.
FILES  := $(VENV)/.package-files
_ := $(shell mkdir -p $(VENV) && find $(SOURCES) -name '*.py' -o -name py.typed | sort > $(FILES).new \
	&& { cmp -s $(FILES).new $(FILES) || mv $(FILES).new $(FILES); }; rm -f $(FILES).new)

$(STAMP): pyproject.toml $(FILES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,spark]' --config-settings editable_mode=strict
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/kcsim serve --host 127.0.0.1 --port 9092 --data-dir ./data

test: $(STAMP)
	$(BIN)/python -m pytest -q --durations=40 $(PYTEST_ARGS)

test-containers: $(STAMP)
	eval "$$(docker/ci-engine.sh start)"; \
	$(BIN)/python -m pytest -q -m containers tests/containers $(PYTEST_ARGS); status=$$?; \
	docker/ci-engine.sh stop; exit $$status

# The multi-broker oracle: a three-node Kafka 4.4 cluster beside a three-broker kcsim.
test-cluster: $(STAMP)
	KCSIM_ORACLE_CLUSTER=1 $(BIN)/python -m pytest -q tests/oracle/test_cluster.py $(PYTEST_ARGS)

image:
	docker build -f docker/Dockerfile -t kcsim .

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(BASELINE),--baseline $(BASELINE))

soak: $(STAMP)
	KCSIM_SOAK=1 $(BIN)/python -m pytest -q tests/server/durability $(PYTEST_ARGS)

# A long mutation fuzz of a `kcsim serve` subprocess: KCSIM_FUZZ_FRAMES frames (default a
# million) from a fresh seed unless KCSIM_FUZZ_SEED is given; prints the seed, frames/s,
# the server's RSS and the good client's longest wait.
fuzz: $(STAMP)
	KCSIM_FUZZ_FRAMES=$${KCSIM_FUZZ_FRAMES:-1000000} $(BIN)/python -m pytest -q -s -p no:cacheprovider \
		tests/server/fuzz/test_fuzz.py $(PYTEST_ARGS)

# The static message classes of protocol/messages, generated from the declarations in
# protocol/apis (a test fails while they differ).
messages: $(STAMP)
	$(BIN)/python -m kcsim.protocol.typegen

lint: $(STAMP)
	$(BIN)/ruff check $(SOURCES) tests bench
	$(BIN)/mypy -p kcsim
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
