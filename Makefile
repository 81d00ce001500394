# Makefile -- the two commands of the README, and a few helpers around CMake.
#   make demo   install missing Debian packages, build, diagnose the bundled example job
#   make test   install missing Debian packages, build, run every test (plain and ASan+UBSan)
#   make mutate apply scripts/mutations.txt one mutation at a time; every mutant must be killed
MAKEFLAGS += --no-print-directory
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps deps-test build demo test test-fast test-asan bench mutate lint clean

all: build

deps:
	@sh scripts/install-deps.sh

deps-test:
	@DDX_WITH_TORCH=1 sh scripts/install-deps.sh

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

# Mutation testing: each breakage of scripts/mutations.txt applied to a copy of the tree, built
# and tested; reports the test that killed it or that it survived (slow: not part of `make test`).
mutate: deps
	@JOBS=$(JOBS) sh scripts/mutate.sh $(MUTATE_ARGS)

bench: build
	@sh bench/run.sh --build $(BUILD) $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
