# Ember: the two commands are `make demo` and `make test` (see README.md).
SWIFT      ?= swift
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
TSAN_PATH  ?= .build-tsan
BENCH_PATH ?= .build-bench

.PHONY: all deps build demo test test-swift test-tsan bench clean

all: build

# Installs what the build needs and is missing. The Swift toolchain itself must be on PATH
# (Swift 6.x); everything else is installed here, never by hand.
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: Swift 6 is required on PATH (https://swift.org/install)"; exit 1; }
	@command -v curl >/dev/null || { echo "installing curl"; (sudo -n true 2>/dev/null && SUDO=sudo || SUDO=; $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq curl); }

build: deps
	$(SWIFT) build -j $(JOBS)

# Runs the seed's scenario (listeners, a pending then acknowledged write, network off and on)
# on the embedded default database.
demo: deps
	$(SWIFT) build -j $(JOBS) --product ember-demo
	./.build/debug/ember-demo

# Every test: the Swift suites (the emulator differential test runs when gcloud's Firestore
# emulator is installed), then the concurrency tests again under ThreadSanitizer.
test: test-swift test-tsan

test-swift: deps
	$(SWIFT) build -j $(JOBS) --build-tests
	$(SWIFT) test --skip-build

test-tsan: deps
	$(SWIFT) build -j $(JOBS) --build-tests --sanitize=thread --scratch-path $(TSAN_PATH)
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path $(TSAN_PATH) --filter 'ConcurrencyTests|ListenerTokenTests|EventThreadTests'

# Benchmarks (release build); prints each figure beside its target and the peers' numbers.
bench: deps
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember-bench
	$(BENCH_PATH)/release/ember-bench

clean:
	rm -rf .build $(TSAN_PATH) $(BENCH_PATH)

# ---------------------------------------------------------------- Python package (bindings/python)
# `pip install ./bindings/python` builds libember (release, scratch .build-python) and the C
# extension; the test venv and pytest are created here, never by hand.
PYTHON     ?= python3
PY_VENV    ?= .venv-test
PY         := $(PY_VENV)/bin/python

.PHONY: python-venv python-install test-python demo-python bench-python

$(PY):
	$(PYTHON) -m venv $(PY_VENV)

python-venv: $(PY)
	@$(PY) -c "import pytest" 2>/dev/null || $(PY) -m pip install -q pytest

python-install: deps python-venv
	EMBER_SWIFT_JOBS=$(JOBS) $(PY) -m pip install -q --force-reinstall --no-deps ./bindings/python

test-python: python-install
	cd bindings/python && ../../$(PY) -m pytest -q -p no:cacheprovider tests

# The seed's scenario in Python (the package installed in $(PY_VENV)).
demo-python: python-install
	cd /tmp && $(CURDIR)/$(PY) $(CURDIR)/bindings/python/examples/demo.py

# Python benchmarks (a)(b)(c) beside the peers' scripts run in the same session.
bench-python: python-install
	$(PY) bench/python/bench_ember.py

test: test-python
demo: demo-python
bench: bench-python
