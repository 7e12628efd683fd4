# Ember's entry points (the two commands for users: `make demo` and `make test`):
#
#   make demo      the seed's scenario on the embedded default database: demo-python, demo-swift
#   make test      every suite, in the tree under "the test tree" below (what CI runs: .ci/run)
#   make check     the quick check for every change: docs hygiene, Swift debug tests, C tests, pytest
#   make bench     every benchmark (release builds), each figure beside its target (bench/targets.json)
#   make bench-*   one of them: bench-swift, bench-c, bench-python, bench-server, bench-rules,
#                  bench-remote, bench-tree-server, bench-tree-remote
#   make fuzz      libFuzzer over the value decoders, paths and the query builder (FUZZ_SECONDS each)
#   make lib       libember.so and its links (LIB_CONFIG=debug, or release in .build-lib)
#   make install   ember.h, libember and ember.pc under PREFIX (DESTDIR honoured)
#   make proto     regenerates Sources/EmberFirestoreProto from proto/ (the generated code is committed)
#   make clean     removes the build directories
#
# Every test-* target below is a named part of `make test` and can be run alone (make test-c, ...).
SWIFT      ?= swift
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
TSAN_PATH  ?= .build-tsan
BENCH_PATH ?= .build-bench
PYTHON     ?= python3

# A hung test fails the run within TEST_TIMEOUT seconds instead of using up CI's time, and leaves
# its name (output line-buffered) and every thread's stack (gdb) in the log: Tests/scripts/watchdog.sh.
TEST_TIMEOUT ?= 1500
WATCHDOG     := Tests/scripts/watchdog.sh $(TEST_TIMEOUT)

.PHONY: all deps build demo demo-swift test check bench bench-swift clean

all: build

# ---- the test tree: `make test` runs these in order, `make check` the quick part of them ----
#   test-docs            prose and comments: undated, every target mapped, links, sizes
#   test-swift           test-swift-unit (the Swift suites, debug), test-hygiene, test-remote-emulator
#   test-tsan            the concurrency tests again under ThreadSanitizer (core only)
#   test-c               test-c-unit (exports, header as C++17, the C tests), test-c-valgrind, test-c-asan
#   test-c-core          the core-only libember (EMBER_CORE_ONLY=1) and the C tests on it
#   test-python          the Python package's pytest suite (bindings/python)
#   test-c-examples      the seed's samples in C, output checked
#   test-cpp             test-cpp-examples, test-cpp-tests, test-cpp-tree-tests
#   test-fuzz            10 s of fuzzing per target
#   test-server          ember serve beside the Firestore emulator (Tests/server)
#   test-remote          Swift, C and Python clients of one ember serve (Tests/remote)
test: test-docs test-swift test-tsan test-c test-c-core test-python test-c-examples test-cpp test-fuzz test-server test-remote

# The quick check for every change: no TSan, no server, remote or emulator suites, no second build.
check: test-docs test-swift-unit test-c-unit test-python

# ---- the demo and the benchmarks (each part is below, with its language) ----
demo: deps demo-python demo-swift
bench: deps bench-c bench-python bench-tree-server bench-server bench-rules bench-tree-remote bench-remote bench-swift bench-scaleout

# Installs what the build needs and is missing. The Swift toolchain itself must be on PATH
# (Swift 6.x); everything else is installed here, never by hand.
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: Swift 6 is required on PATH (https://swift.org/install)"; exit 1; }
	@command -v curl >/dev/null || { echo "installing curl"; (sudo -n true 2>/dev/null && SUDO=sudo || SUDO=; $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq curl); }
	@{ dpkg -s libsqlite3-dev >/dev/null 2>&1 || printf '#include <sqlite3.h>\nint main(void){return 0;}\n' | $${CC:-cc} -x c - -o /dev/null -lsqlite3 >/dev/null 2>&1; } || { echo "installing libsqlite3-dev (the system SQLite for durable storage)"; (sudo -n true 2>/dev/null && SUDO=sudo || SUDO=; $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq libsqlite3-dev); }

# PostgreSQL, for the scale-out tests: Tests/scripts/with_postgres.py starts a cluster of the test
# run's own (EMBER_TEST_POSTGRES_URL) and removes it at the end.
.PHONY: postgres-deps
postgres-deps:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { echo "installing postgresql (the server the scale-out tests start)"; (sudo -n true 2>/dev/null && SUDO=sudo || SUDO=; $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql); }

build: deps
	$(SWIFT) build -j $(JOBS)

# Runs the seed's scenario (listeners, a pending then acknowledged write, network off and on)
# on the embedded default database.
demo-swift: deps
	$(SWIFT) build -j $(JOBS) --product ember-demo
	./.build/debug/ember-demo

# Prose and comments stay undated and mapped, links resolve, sizes hold (Tests/scripts/docs_hygiene.py,
# after its own test).
.PHONY: test-docs
test-docs:
	$(PYTHON) Tests/scripts/test_docs_hygiene.py
	$(PYTHON) Tests/scripts/docs_hygiene.py

# The Swift suites (the emulator differential test runs when gcloud's Firestore emulator is
# installed), then the test of the test runner and the remote tests on the emulator.
.PHONY: test-swift-unit
test-swift: test-swift-unit
	$(MAKE) --no-print-directory test-hygiene
	$(MAKE) --no-print-directory test-remote-emulator
test-swift-unit: deps postgres-deps
	$(SWIFT) build -j $(JOBS) --build-tests
	$(WATCHDOG) $(PYTHON) Tests/scripts/with_postgres.py $(SWIFT) test --skip-build

# EmberRemoteTests again, against the Firestore emulator (the same scenarios there), on the tests
# test-swift-unit built; skipped with a message where the emulator is not installed.
.PHONY: test-remote-emulator
test-remote-emulator:
	SWIFT=$(SWIFT) $(WATCHDOG) $(PYTHON) Tests/scripts/remote_tests_on_emulator.py .build

# The test of the test runner: the Firestore emulator a test process starts is gone however the
# process ends (normal end, failed assertion, SIGKILL, SIGKILL without being reaped).
.PHONY: test-hygiene
test-hygiene:
	$(PYTHON) Tests/scripts/emulator_hygiene.py .build

# Without the server's targets (EMBER_CORE_ONLY=1: no gRPC or BoringSSL to build under TSan).
test-tsan: deps
	EMBER_CORE_ONLY=1 $(SWIFT) build -j $(JOBS) --build-tests --sanitize=thread --scratch-path $(TSAN_PATH)
	EMBER_CORE_ONLY=1 $(WATCHDOG) $(SWIFT) test --skip-build --sanitize=thread --scratch-path $(TSAN_PATH) --filter 'ConcurrencyTests|ListenerTokenTests|EventThreadTests|EventThreadPlacementTests|EmberClientWriteTests|EmberModelTests.DocumentTests|BackendIndexBuildTests|EmberClientCloseTests|TreeTransactionTests|TreeInfoTests'

# The core's benchmarks (release build); prints each figure beside its target and the peers' numbers.
bench-swift: deps
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember-bench
	$(BENCH_PATH)/release/ember-bench

clean:
	rm -rf .build $(TSAN_PATH) $(BENCH_PATH)

# ---- the server's wire types (proto/ -> Sources/EmberFirestoreProto, committed) ----
# Regenerates the Swift code from Ember's .proto files: installs protoc (Debian's
# protobuf-compiler) if missing and builds the two plugins from the pinned packages in their own
# scratch path. CI never runs this: the generated code is committed.
PROTO_TOOLS ?= .build-protoc
.PHONY: proto
proto:
	@command -v protoc >/dev/null || { echo "installing protobuf-compiler"; (sudo -n true 2>/dev/null && SUDO=sudo || SUDO=; $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq protobuf-compiler); }
	@mkdir -p $(PROTO_TOOLS)/Sources/Tools
	@printf '// swift-tools-version:6.0\nimport PackageDescription\nlet package = Package(name: "tools", dependencies: [.package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"), .package(url: "https://github.com/grpc/grpc-swift-protobuf", exact: "2.4.1")], targets: [.target(name: "Tools")])\n' > $(PROTO_TOOLS)/Package.swift
	@echo 'let unused = 0' > $(PROTO_TOOLS)/Sources/Tools/Tools.swift
	cd $(PROTO_TOOLS) && $(SWIFT) build -c release --product protoc-gen-swift && $(SWIFT) build -c release --product protoc-gen-grpc-swift-2
	rm -f Sources/EmberFirestoreProto/*.pb.swift Sources/EmberFirestoreProto/*.grpc.swift
	cd proto && protoc -I. -I/usr/include \
	  --plugin=protoc-gen-swift=$(abspath $(PROTO_TOOLS))/.build/release/protoc-gen-swift \
	  --swift_out=../Sources/EmberFirestoreProto --swift_opt=Visibility=Public \
	  ember_firestore_v1.proto ember_rpc_status.proto ember_latlng.proto ember_health_v1.proto
	cd proto && protoc -I. -I/usr/include \
	  --plugin=protoc-gen-grpc-swift-2=$(abspath $(PROTO_TOOLS))/.build/release/protoc-gen-grpc-swift-2 \
	  --grpc-swift-2_out=../Sources/EmberFirestoreProto --grpc-swift-2_opt=Visibility=Public,Server=true,Client=true \
	  ember_firestore_v1.proto ember_health_v1.proto

# ---- C ABI (include/ember.h, libember.so, bindings/c) ----
# LIB_CONFIG=release builds the library in its own scratch path (.build-lib).
LIB_CONFIG ?= debug
LIB_PATH   ?= $(if $(filter release,$(LIB_CONFIG)),.build-lib,.build)
LIB_DIR     = $(LIB_PATH)/$(LIB_CONFIG)
CTEST_DIR   = $(LIB_PATH)/c-tests
CC         ?= cc
CXX        ?= c++
C_WARN      = -Wall -Wextra -Werror -pedantic
C_TEST_SRC  = $(wildcard bindings/c/tests/*.c)
C_TEST_LINK = -Iinclude -Ibindings/c/tests $(C_TEST_SRC) -L$(LIB_DIR) -lember -Wl,-rpath,$(abspath $(LIB_DIR)) -lpthread
PREFIX     ?= /usr/local
VALGRIND   ?= valgrind

.PHONY: lib test-c test-c-unit test-c-valgrind test-c-asan install

lib: deps
	$(SWIFT) build -j $(JOBS) -c $(LIB_CONFIG) --scratch-path $(LIB_PATH) --product ember-c
	ln -sf libember-c.so $(LIB_DIR)/libember.so
	ln -sf libember.so $(LIB_DIR)/libember.so.0

# The C tests: header as C99 and C++17, exports and SONAME, the tests (test-c-unit), then under
# valgrind and ASan.
test-c: test-c-unit
	$(MAKE) --no-print-directory test-c-valgrind test-c-asan
test-c-unit: lib
	@mkdir -p $(CTEST_DIR)
	@echo "== exports: only ember_* (and the version node), SONAME libember.so.0"
	@bad=$$(nm -D --defined-only $(LIB_DIR)/libember.so | awk '$$2 ~ /[A-Z]/ && $$3 !~ /^ember_/ && $$3 != "EMBER_0" {print $$3}'); \
	  if [ -n "$$bad" ]; then echo "unexpected exports:"; echo "$$bad" | head; exit 1; fi
	@readelf -d $(LIB_DIR)/libember.so | grep -q 'SONAME.*libember.so.0' || { echo "no SONAME libember.so.0"; exit 1; }
	@echo "== header as C++17"
	$(CXX) -std=c++17 $(C_WARN) -Iinclude bindings/c/tests/test_header_cpp.cpp -L$(LIB_DIR) -lember -Wl,-rpath,$(abspath $(LIB_DIR)) -o $(CTEST_DIR)/header-cpp
	$(CTEST_DIR)/header-cpp
	@echo "== C tests (C99)"
	$(CC) -std=c99 $(C_WARN) -g -O1 $(C_TEST_LINK) -o $(CTEST_DIR)/ember-ctests
	$(WATCHDOG) $(CTEST_DIR)/ember-ctests

# The core-only libember (EMBER_CORE_ONLY=1, no remote support: its own scratch path): exports,
# no full Foundation (the full library loads it through the gRPC stack's SwiftProtobuf), and the C
# tests (which check that every host is refused there).
CORE_PATH ?= .build-core
.PHONY: test-c-core
test-c-core: deps
	EMBER_CORE_ONLY=1 $(SWIFT) build -j $(JOBS) --scratch-path $(CORE_PATH) --product ember-c
	ln -sf libember-c.so $(CORE_PATH)/debug/libember.so
	ln -sf libember.so $(CORE_PATH)/debug/libember.so.0
	@echo "== core-only libember: exports only ember_*, no full Foundation"
	@bad=$$(nm -D --defined-only $(CORE_PATH)/debug/libember.so | awk '$$2 ~ /[A-Z]/ && $$3 !~ /^ember_/ && $$3 != "EMBER_0" {print $$3}'); \
	  if [ -n "$$bad" ]; then echo "unexpected exports:"; echo "$$bad" | head; exit 1; fi
	@! ldd $(CORE_PATH)/debug/libember.so | grep -q 'libFoundation.so' || { echo "the core-only libember links full Foundation"; exit 1; }
	@mkdir -p $(CORE_PATH)/c-tests
	$(CC) -std=c99 $(C_WARN) -g -O1 -Iinclude -Ibindings/c/tests $(C_TEST_SRC) -L$(CORE_PATH)/debug -lember -Wl,-rpath,$(abspath $(CORE_PATH))/debug -lpthread -o $(CORE_PATH)/c-tests/ember-ctests
	$(WATCHDOG) $(CORE_PATH)/c-tests/ember-ctests

# valgrind 3.19 cannot read the debug information of a libember with the gRPC stack (BoringSSL's
# DWARF 5: "Possibly corrupted debuginfo file ... Giving up"), so the tests run against a copy
# without it (objcopy --strip-debug; the symbols stay, suppressions and reports keep their names).
test-c-valgrind:
	@echo "== C tests under valgrind (suppressions: Swift runtime only)"
	@mkdir -p $(CTEST_DIR)/valgrind-lib
	objcopy --strip-debug $(LIB_DIR)/libember.so $(CTEST_DIR)/valgrind-lib/libember.so.0
	LD_LIBRARY_PATH=$(CTEST_DIR)/valgrind-lib $(WATCHDOG) $(VALGRIND) --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	  --show-leak-kinds=definite --suppressions=bindings/c/tests/valgrind.supp $(CTEST_DIR)/ember-ctests

test-c-asan:
	@echo "== C tests under AddressSanitizer + UBSan"
	$(CC) -std=c99 $(C_WARN) -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer $(C_TEST_LINK) -o $(CTEST_DIR)/ember-ctests-asan
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=bindings/c/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1 WATCHDOG_STDBUF=0 $(WATCHDOG) $(CTEST_DIR)/ember-ctests-asan

# Installs the header, the library (libember.so -> .so.0 -> .so.0.6.0) and ember.pc under PREFIX.
install:
	$(MAKE) --no-print-directory lib LIB_CONFIG=release
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/ember.h $(DESTDIR)$(PREFIX)/include/ember.h
	install -m 755 .build-lib/release/libember.so $(DESTDIR)$(PREFIX)/lib/libember.so.0.6.0
	ln -sf libember.so.0.6.0 $(DESTDIR)$(PREFIX)/lib/libember.so.0
	ln -sf libember.so.0 $(DESTDIR)$(PREFIX)/lib/libember.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.6.0|' bindings/c/ember.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/ember.pc
	@echo "installed: cc app.c \$$(PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig pkg-config --cflags --libs ember)"

# C-level benchmarks against the release libember (also run by `make bench`), judged by the
# c.* targets of bench/targets.json (passed in as EMBER_TARGET_<ID>; all are "at most").
.PHONY: bench-c
bench-c:
	$(MAKE) --no-print-directory lib LIB_CONFIG=release
	@mkdir -p .build-lib/c-bench
	$(CC) -std=c99 -O2 -Wall -Werror -Iinclude bench/c/bench.c -L.build-lib/release -lember -Wl,-rpath,$(abspath .build-lib/release) -lpthread -o .build-lib/c-bench/ember-c-bench
	env $$(python3 -c 'import json; print(" ".join("EMBER_TARGET_%s=%s" % (e["id"][2:].upper(), e["value"]) for e in json.load(open("bench/targets.json"))["targets"] if e["id"].startswith("c.") and e["comparison"] == "≤"))') \
		.build-lib/c-bench/ember-c-bench

# Installs into a scratch prefix and builds a program with pkg-config, as a user would.
.PHONY: test-install
test-install:
	rm -rf .build-lib/prefix
	$(MAKE) --no-print-directory install PREFIX=$(abspath .build-lib/prefix)
	PKG_CONFIG_PATH=$(abspath .build-lib/prefix)/lib/pkgconfig sh -c '$(CC) -std=c99 -Wall -Werror bindings/c/tests/install/app.c $$(pkg-config --cflags --libs ember) -o .build-lib/prefix/app'
	.build-lib/prefix/app
# ---------------------------------------------------------------- Python package (bindings/python)
# `pip install ./bindings/python` builds libember (release, scratch .build-python) and the C
# extension; the test venv and pytest are created here, never by hand.
PY_VENV    ?= .venv-test
PY         := $(PY_VENV)/bin/python

.PHONY: python-venv python-install test-python demo-python bench-python peers-venv

$(PY):
	$(PYTHON) -m venv $(PY_VENV)

python-venv: $(PY)
	@$(PY) -c "import pytest" 2>/dev/null || $(PY) -m pip install -q pytest

python-install: deps python-venv
	EMBER_SWIFT_JOBS=$(JOBS) $(PY) -m pip install -q --force-reinstall --no-deps ./bindings/python

# `make test` installs the package around the debug libember the C tests use (EMBER_LIBRARY), also
# in the fresh-venv test: the release build (`make demo`, `make bench-python`, a user's pip install)
# would compile the gRPC stack a second time.
.PHONY: python-install-test
python-install-test: deps python-venv lib
	EMBER_LIBRARY=$(abspath $(LIB_DIR))/libember-c.so $(PY) -m pip install -q --force-reinstall --no-deps ./bindings/python

test-python: python-install-test
	cd bindings/python && EMBER_LIBRARY=$(abspath $(LIB_DIR))/libember-c.so ../../$(WATCHDOG) ../../$(PY) -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300 tests

# The seed's scenario in Python (the package installed in $(PY_VENV)).
demo-python: python-install
	cd /tmp && $(CURDIR)/$(PY) $(CURDIR)/bindings/python/examples/demo.py

# Python benchmarks (a)(b)(c) beside the peers' scripts run in the same session.
# The peers' Python packages (apsw, tinydb) go into their own venv, made here, never by hand.
PEERS_VENV ?= .venv-peers
$(PEERS_VENV)/bin/python:
	$(PYTHON) -m venv $(PEERS_VENV)
peers-venv: $(PEERS_VENV)/bin/python
	@$(PEERS_VENV)/bin/python -c "import apsw, tinydb" 2>/dev/null || $(PEERS_VENV)/bin/python -m pip install -q apsw tinydb

bench-python: python-install peers-venv
	PEERS_PYTHON=$(abspath $(PEERS_VENV))/bin/python $(PY) bench/python/bench_ember.py
	$(PY) bench/python/bench_tree.py

# ---- C examples (bindings/c/examples): the seed's Firestore samples in C, output checked ----
C_EXAMPLES  = $(sort $(wildcard bindings/c/examples/*.c))
EXAMPLE_DIR = $(LIB_PATH)/c-examples

.PHONY: test-c-examples
test-c-examples: lib
	@mkdir -p $(EXAMPLE_DIR)
	@echo "== C examples (output against bindings/c/examples/*.expected)"
	@set -e; for src in $(C_EXAMPLES); do n=$$(basename $$src .c); \
	  $(CC) -std=c99 $(C_WARN) -Iinclude $$src -L$(LIB_DIR) -lember -Wl,-rpath,$(abspath $(LIB_DIR)) -lpthread -o $(EXAMPLE_DIR)/$$n; \
	  $(EXAMPLE_DIR)/$$n > $(EXAMPLE_DIR)/$$n.out 2>&1 || { cat $(EXAMPLE_DIR)/$$n.out; echo "FAIL $$n (exit status)"; exit 1; }; \
	  diff -u bindings/c/examples/$$n.expected $(EXAMPLE_DIR)/$$n.out || { echo "FAIL $$n (output)"; exit 1; }; \
	  echo "ok $$n"; done

# ---- C++ (bindings/cpp): the header-only wrapper, the seed's C++ samples, the wrapper's tests ----
CPP_EXAMPLES = $(sort $(wildcard bindings/cpp/examples/*.cpp))
CPP_DIR      = $(LIB_PATH)/cpp
CPP_FLAGS    = -std=c++17 -Iinclude -Ibindings/cpp/include -L$(LIB_DIR) -lember -Wl,-rpath,$(abspath $(LIB_DIR)) -lpthread

.PHONY: test-cpp test-cpp-examples test-cpp-tests test-cpp-tree-tests
test-cpp: test-cpp-examples test-cpp-tests test-cpp-tree-tests
test-cpp-examples: lib
	@mkdir -p $(CPP_DIR)
	@echo "== C++ examples: the seed's samples, -Wall -Werror, output against bindings/cpp/examples/*.expected"
	@set -e; for src in $(CPP_EXAMPLES); do n=$$(basename $$src .cpp); \
	  $(CXX) -Wall -Werror $$src $(CPP_FLAGS) -o $(CPP_DIR)/$$n; \
	  $(CPP_DIR)/$$n > $(CPP_DIR)/$$n.out 2>&1 || { cat $(CPP_DIR)/$$n.out; echo "FAIL $$n (exit status)"; exit 1; }; \
	  diff -u bindings/cpp/examples/$$n.expected $(CPP_DIR)/$$n.out || { echo "FAIL $$n (output)"; exit 1; }; \
	  echo "ok $$n"; done

# ---- Fuzzing (bindings/c/fuzz): libFuzzer over the value decoders, paths and the query builder ----
# libember is rebuilt with AddressSanitizer and coverage (its own scratch path) so that libFuzzer
# sees the Swift code's edges; each target runs FUZZ_SECONDS from the committed seed corpus plus
# what earlier runs found ($(FUZZ_PATH)/corpus). Crashes land in $(FUZZ_PATH)/artifacts.
FUZZ_SECONDS ?= 60
FUZZ_PATH    ?= .build-fuzz
FUZZ_CC      ?= $(if $(wildcard /opt/swift/usr/bin/clang),/opt/swift/usr/bin/clang,clang)
FUZZ_LDFLAGS ?= $(if $(wildcard /opt/swift/usr/bin/ld.lld),-fuse-ld=lld,)
FUZZ_TARGETS  = values paths query

.PHONY: fuzz fuzz-build test-fuzz
# The fuzzed code (values, paths, queries) is all in the core: the library is built core-only
# (EMBER_CORE_ONLY=1), without the gRPC stack of remote support.
fuzz-build: deps
	EMBER_CORE_ONLY=1 $(SWIFT) build -j $(JOBS) -c release --scratch-path $(FUZZ_PATH) --product ember-c \
	  -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp
	ln -sf libember-c.so $(FUZZ_PATH)/release/libember.so
	ln -sf libember.so $(FUZZ_PATH)/release/libember.so.0
	@mkdir -p $(FUZZ_PATH)/bin
	@for t in $(FUZZ_TARGETS); do \
	  $(FUZZ_CC) $(FUZZ_LDFLAGS) -std=c99 -g -O1 $(C_WARN) -fsanitize=fuzzer,address -Iinclude bindings/c/fuzz/fuzz_$$t.c \
	    -L$(FUZZ_PATH)/release -lember -Wl,-rpath,$(abspath $(FUZZ_PATH))/release -o $(FUZZ_PATH)/bin/fuzz_$$t || exit 1; done

fuzz: fuzz-build
	@mkdir -p $(FUZZ_PATH)/artifacts
	@for t in $(FUZZ_TARGETS); do mkdir -p $(FUZZ_PATH)/corpus/$$t; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  ASAN_OPTIONS=detect_leaks=0 $(FUZZ_PATH)/bin/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(abspath $(FUZZ_PATH))/artifacts/$$t- $(FUZZ_PATH)/corpus/$$t bindings/c/fuzz/corpus/$$t \
	    > $(FUZZ_PATH)/fuzz_$$t.log 2>&1 \
	    || { tail -60 $(FUZZ_PATH)/fuzz_$$t.log; echo "FAIL fuzz_$$t: input saved in $(FUZZ_PATH)/artifacts"; exit 1; }; \
	  grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss' $(FUZZ_PATH)/fuzz_$$t.log; done

# The 30-second run of `make test`: 10 s per target.
test-fuzz:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=10

# The wrapper's own tests, plain and under AddressSanitizer + UBSan.
test-cpp-tests: lib
	@mkdir -p $(CPP_DIR)
	@echo "== C++ wrapper tests"
	$(CXX) -g -O1 $(C_WARN) bindings/cpp/tests/test_wrapper.cpp $(CPP_FLAGS) -o $(CPP_DIR)/test-wrapper
	$(CPP_DIR)/test-wrapper
	@echo "== C++ wrapper tests under AddressSanitizer + UBSan"
	$(CXX) -g -O1 $(C_WARN) -fsanitize=address,undefined -fno-omit-frame-pointer bindings/cpp/tests/test_wrapper.cpp $(CPP_FLAGS) -o $(CPP_DIR)/test-wrapper-asan
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=bindings/c/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1 $(CPP_DIR)/test-wrapper-asan

# The tree wrapper's tests (bindings/cpp/include/ember/database.h), plain and under ASan + UBSan.
# Its examples (bindings/cpp/examples/*_tree_*.cpp) run with the others in test-cpp-examples.
test-cpp-tree-tests: lib
	@mkdir -p $(CPP_DIR)
	@echo "== C++ tree wrapper tests"
	$(CXX) -g -O1 $(C_WARN) bindings/cpp/tests/test_database.cpp $(CPP_FLAGS) -o $(CPP_DIR)/test-database
	$(CPP_DIR)/test-database
	@echo "== C++ tree wrapper tests under AddressSanitizer + UBSan"
	$(CXX) -g -O1 $(C_WARN) -fsanitize=address,undefined -fno-omit-frame-pointer bindings/cpp/tests/test_database.cpp $(CPP_FLAGS) -o $(CPP_DIR)/test-database-asan
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=bindings/c/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1 $(CPP_DIR)/test-database-asan

# ---- the server (ember serve): Python tests with google-cloud-firestore, the emulator beside it ----
# The venv with google-cloud-firestore and pytest is made here, never by hand. Tests/server/README.md
# describes the tests; EMBER_SERVER_TESTS=emulator-only runs only their emulator side.
SERVER_VENV ?= .venv-server
SERVER_PY   := $(SERVER_VENV)/bin/python
EMBER_BIN   ?= $(abspath .build/debug/ember)
.PHONY: server-venv server-bin test-server
$(SERVER_PY):
	$(PYTHON) -m venv $(SERVER_VENV)
server-venv: $(SERVER_PY)
	@$(SERVER_PY) -c "import google.cloud.firestore, pytest, h2, firebase_admin, websocket" 2>/dev/null || $(SERVER_PY) -m pip install -q google-cloud-firestore pytest h2 firebase-admin websocket-client

# The server binary the tests run (EMBER_BIN).
server-bin: deps
	$(SWIFT) build -j $(JOBS) --product ember

# The differential tests (the same client scripts against the emulator and ember serve), the
# multi-process tests, and instances sharing a PostgreSQL (test_postgres.py, on the run's own).
test-server: server-bin server-venv postgres-deps
	EMBER_BIN=$(EMBER_BIN) $(WATCHDOG) $(PYTHON) Tests/scripts/with_postgres.py $(SERVER_PY) -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300 Tests/server
	@echo "the differential, contract, access and rules suites again, against PostgreSQL-backed servers"
	EMBER_BIN=$(EMBER_BIN) EMBER_SERVER_STORE=postgres $(WATCHDOG) $(PYTHON) Tests/scripts/with_postgres.py $(SERVER_PY) -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300 Tests/server/test_differential.py Tests/server/test_servers.py Tests/server/access Tests/server/rules

# The tree on ember serve: REST write -> SSE event, fan-out to 1,000 streams, pushes/s.
.PHONY: bench-tree-server
bench-tree-server: deps
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember
	$(PYTHON) bench/tree-server/bench_tree_server.py $(BENCH_PATH)/release/ember $(BENCH_TREE_SERVER_ARGS)

# The server's benchmarks (release build), the Firestore emulator measured beside it
# (bench/server/README.md). BENCH_SERVER_ARGS: e.g. --quick, --only ember, --json FILE.
BENCH_SERVER_ARGS ?=
.PHONY: bench-server
bench-server: deps server-venv
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember
	$(SERVER_PY) bench/server/bench_server.py $(BENCH_PATH)/release/ember $(BENCH_SERVER_ARGS)

# Several ember serve instances on one PostgreSQL (a cluster of the run's own) beside a
# SQLite-backed one: commits/s with 1-3 instances, A -> B, catch-up, 10,000 listeners
# (bench/scaleout/README.md). BENCH_SCALEOUT_ARGS: e.g. --quick, --json FILE.
BENCH_SCALEOUT_ARGS ?=
.PHONY: bench-scaleout
bench-scaleout: deps server-venv postgres-deps
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember
	$(SERVER_PY) bench/scaleout/bench_scaleout.py $(BENCH_PATH)/release/ember $(BENCH_SCALEOUT_ARGS)

# What security rules and ID tokens cost a call: ember serve without rules, with
# --rules and an HS256 token, and the emulator with the same rules (bench/rules/bench_rules.py).
.PHONY: bench-rules
bench-rules: deps server-venv
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember
	$(SERVER_PY) bench/rules/bench_rules.py $(BENCH_PATH)/release/ember $(BENCH_RULES_ARGS)

# ---- clients of a server: Swift, C and Python client processes on one `ember serve` ----
# Tests/remote/README.md describes the tests. The C client is built against the debug libember
# (LIB_DIR), the Swift one is the EmberHostClient executable, the Python one runs in $(PY_VENV)
# with the package `make python-install` installed. The watch scenarios drive the
# EmberScriptedFirestore executable (a server whose watch the test scripts).
REMOTE_DIR = $(LIB_PATH)/remote
.PHONY: test-remote
test-remote: lib server-bin python-install-test
	$(SWIFT) build -j $(JOBS) --product EmberHostClient
	$(SWIFT) build -j $(JOBS) --product EmberScriptedFirestore
	@mkdir -p $(REMOTE_DIR)
	$(CC) -std=c99 $(C_WARN) -g -Iinclude Tests/remote/c_client.c -L$(LIB_DIR) -lember -Wl,-rpath,$(abspath $(LIB_DIR)) -lpthread -o $(REMOTE_DIR)/c_client
	$(CC) -std=c99 $(C_WARN) -g -Iinclude Tests/remote/c_tree_client.c -L$(LIB_DIR) -lember -Wl,-rpath,$(abspath $(LIB_DIR)) -lpthread -o $(REMOTE_DIR)/c_tree_client
	EMBER_BIN=$(EMBER_BIN) EMBER_C_CLIENT=$(abspath $(REMOTE_DIR))/c_client EMBER_C_TREE_CLIENT=$(abspath $(REMOTE_DIR))/c_tree_client EMBER_SWIFT_CLIENT=$(abspath .build/debug/EmberHostClient) \
	  EMBER_SCRIPTED_FIRESTORE=$(abspath .build/debug/EmberScriptedFirestore) \
	  $(WATCHDOG) $(PY) -m pytest -q -p no:cacheprovider -o faulthandler_timeout=300 Tests/remote

# ---- the remote benchmarks: Ember's clients of `ember serve`, the Firestore emulator beside it ----
# (bench/remote/README.md). One release build in $(BENCH_PATH): the server, libember (which the
# Python package in $(PY_VENV) is installed around, EMBER_LIBRARY: no second build of the gRPC
# stack) and the Swift client processes (EmberRemoteBench). BENCH_REMOTE_ARGS: e.g. --samples 200,
# --only ember, --json FILE.
BENCH_REMOTE_ARGS ?=
.PHONY: bench-remote
bench-remote: deps server-venv python-venv
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember-c
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product EmberRemoteBench
	EMBER_LIBRARY=$(abspath $(BENCH_PATH))/release/libember-c.so $(PY) -m pip install -q --force-reinstall --no-deps ./bindings/python
	$(SERVER_PY) bench/remote/bench_remote.py --ember-bin $(BENCH_PATH)/release/ember \
	  --swift-bench $(BENCH_PATH)/release/EmberRemoteBench --ember-python $(abspath $(PY)) $(BENCH_REMOTE_ARGS)

# Ember's tree clients through ember serve: push -> child_added across processes (Python
# and Swift clients), fan-out, resume of a 10,000-child list (bench/tree-remote/README.md).
.PHONY: bench-tree-remote
bench-tree-remote: deps python-venv
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product ember-c
	$(SWIFT) build -j $(JOBS) -c release --scratch-path $(BENCH_PATH) --product EmberRemoteBench
	EMBER_LIBRARY=$(abspath $(BENCH_PATH))/release/libember-c.so $(PY) -m pip install -q --force-reinstall --no-deps ./bindings/python
	$(PY) bench/tree-remote/bench_tree_remote.py --ember-bin $(BENCH_PATH)/release/ember \
	  --swift-bench $(BENCH_PATH)/release/EmberRemoteBench $(BENCH_TREE_REMOTE_ARGS)
