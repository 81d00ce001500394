# Makefile -- the two commands of the README, and a few helpers around CMake.
#   make demo   install missing Debian packages, build, diagnose the bundled example job
#   make test   install missing Debian packages, build, run every test (plain and ASan+UBSan)
#   make install     the binary, its man page and shell completions under $(DESTDIR)$(PREFIX)
#   make fuzz        the libFuzzer targets (clang); make fuzz-run FUZZ_SECONDS=N runs them all
MAKEFLAGS += --no-print-directory
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps deps-test deps-fuzz build demo test test-fast test-asan bench lint clean fuzz fuzz-run

all: build

deps:
	@sh scripts/install-deps.sh

deps-test:
	@DDX_WITH_TORCH=1 sh scripts/install-deps.sh

deps-fuzz:
	@DDX_WITH_FUZZ=1 sh scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

DEMO ?= examples/orpo-gather-shape-mismatch/

# ddx exits 1 when it finds something: for the demo that is success.
demo: build
	@echo "\$$ $(BUILD)/ddx diagnose $(DEMO)"
	@$(BUILD)/ddx diagnose $(DEMO); test $$? -le 1

test: deps-test build test-fast test-asan

test-fast: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DDDX_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS) -LE slow

bench: build
	@sh bench/run.sh --build $(BUILD) $(BENCH_ARGS)

# libFuzzer targets for every parser (fuzz/), instrumented with ASan and UBSan; fuzz-run runs
# each for FUZZ_SECONDS at the lowest priority and keeps the corpora (docs/robustness.md).
fuzz: deps-fuzz
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DDDX_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)

fuzz-run: fuzz
	@sh fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
