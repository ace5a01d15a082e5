# The two set-up commands of the README: `make demo` and `make test`. Both install what they need
# (Debian packages), configure, build and run. Installing is idempotent.
BUILD ?= build
JOBS ?= $(shell nproc)
APT_PACKAGES = build-essential cmake nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev \
               libgmock-dev libbenchmark-dev libtomlplusplus-dev libyaml-cpp-dev python3 python3-yaml \
               libopenmpi-dev openmpi-bin libcpp-httplib-dev pkg-config nodejs npm chromium \
               pybind11-dev python3-dev python3-pytest

# The sanitizer and fuzz builds (`make test-sanitize`, `make fuzz`): clang-14 with libFuzzer
# (libclang-rt-14-dev) and AddressSanitizer + UndefinedBehaviorSanitizer.
FUZZ_APT_PACKAGES = clang-14 libclang-rt-14-dev
SAN_BUILD ?= build-sanitize
FUZZ_BUILD ?= build-fuzz
# One libFuzzer target per parser (fuzz/fuzz_parsers.cc, kTargets); inputs per target and an
# optional time box per target in seconds (0 = none).
FUZZ_TARGETS = model hardware override strategy megatron validation vary search_shard enums \
               deepspeed torchtitan accelerate trl llamafactory megatron_model layout rest
FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 0
# libFuzzer's -seed: 0 draws a new one each run (exploration); sanitize-ci fixes it so that a CI
# result reproduces here with the same command.
FUZZ_SEED ?= 0
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

.PHONY: deps build demo test bench validate format clean fuzz-deps test-sanitize fuzz-build fuzz \
        fuzz-smoke sanitize-ci

# A package counts as present when installed or provided by an installed one (NodeSource's
# nodejs provides npm, and Debian's npm would conflict with it).
deps:
	@provided=$$(dpkg-query -W -f='$${Provides}\n' 2>/dev/null | tr ',' '\n' | sed 's/ *(.*//; s/^ *//'); \
	missing=""; for p in $(APT_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || echo "$$provided" | grep -qx "$$p" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/trainsim simulate --model llama3-70b --hardware h100_sxm_80gb --gpus 64 --tp 8 --pp 4 --vpp 5 --mbs 1 --gbs 128 --seq 8192 --recompute selective

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/trainsim_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

validate: build
	./$(BUILD)/trainsim validate ../shared/validation/cases/*.jsonl

fuzz-deps: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(FUZZ_APT_PACKAGES)"

# The unit tests and the CLI script tests in an ASan + UBSan build (in CI, .ci/run, after
# sanitize-ci below; 17 min cold on 2 cores, docs/INPUTS.md): clang-14 (compiles these sanitized sources ~3x faster than gcc -O2) at -O1
# with line tables only, precompiled headers (cmake/pch.cmake), ccache when present, and only the
# two binaries the tests run (trainsim, trainsim_tests): no bench, no MPI search (OpenMPI's
# allocations read as leaks), no Python module (an ASan module needs the runtime preloaded into
# python), no web page. Every ctest test runs except `web_browser` (label
# browser: it needs the page, and drives Chromium, not the sanitized code).
SAN_CCACHE = $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
SAN_CMAKE_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DTRAINSIM_SANITIZE=ON \
  -DTRAINSIM_BUILD_BENCH=OFF -DTRAINSIM_PYTHON=OFF -DTRAINSIM_BUILD_WEB=OFF -DTRAINSIM_PCH=ON \
  $(SAN_CCACHE)
# The in-test fuzzer at a tenth of its inputs (1e5): the libFuzzer targets do the long runs.
SAN_FUZZ_SCALE ?= 0.1
# Wall-clock limits of the tests (the server's 10 s search budget in the serve tests, "answers
# within N s" checks) stretched 10x: the sanitized code is several times slower, and CI and this
# machine share their cores (TRAINSIM_TEST_TIME_SCALE: src/util/test_time_scale.h,
# tests/serve_test.py).
SAN_TIME_SCALE ?= 10
# Every sanitizer report also goes to a file (log_path: one per reporting process, none when
# clean), so a report from a `trainsim` run by a script that swallows its stderr or only checks
# "exit != 0" (an abort is 134) still fails the target: any file there is printed and fails it.
SAN_LOG_DIR = $(abspath $(SAN_BUILD))/sanitizer-logs
SAN_TEST_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:log_path=$(SAN_LOG_DIR)/san \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(SAN_LOG_DIR)/san
test-sanitize: fuzz-deps
	cmake -S . -B $(SAN_BUILD) $(SAN_CMAKE_FLAGS) >/dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS) --target trainsim trainsim_tests
	@rm -rf $(SAN_LOG_DIR); mkdir -p $(SAN_LOG_DIR)
	cd $(SAN_BUILD) && TRAINSIM_FUZZ_SCALE=$(SAN_FUZZ_SCALE) TRAINSIM_TEST_TIME_SCALE=$(SAN_TIME_SCALE) \
	  $(SAN_TEST_ENV) ctest --output-on-failure -j $(JOBS) -LE browser $(SAN_CTEST_ARGS); rc=$$?; \
	if [ -n "$$(ls -A $(SAN_LOG_DIR))" ]; then \
	  echo "test-sanitize: sanitizer reports in $(SAN_LOG_DIR):"; head -n 40 $(SAN_LOG_DIR)/*; exit 1; \
	fi; exit $$rc

# FUZZ_CMAKE_EXTRA: more CMake flags (sanitize-ci: -O1 and precompiled headers).
FUZZ_CMAKE_EXTRA ?=
fuzz-build: fuzz-deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DTRAINSIM_FUZZ=ON -DTRAINSIM_BUILD_TESTS=OFF -DTRAINSIM_BUILD_BENCH=OFF -DTRAINSIM_PYTHON=OFF \
	  -DTRAINSIM_BUILD_WEB=OFF $(SAN_CCACHE) $(FUZZ_CMAKE_EXTRA) >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target trainsim_fuzz

# FUZZ_RUNS inputs per parser (libFuzzer -runs; a FUZZ_SECONDS time box, if set, stops earlier),
# e.g. `make fuzz FUZZ_RUNS=10000000` for issue 11's 10^7; FUZZ_JOBS parsers at once (one core
# each). fuzz/run.sh runs one parser: the corpus grows in $(FUZZ_BUILD)/corpus, crashes land in
# $(FUZZ_BUILD)/crashes, and it prints one line (inputs executed, exec/s, wall seconds, crash
# artifacts written, exit code) as the parser finishes; a failing parser's log tail is printed.
# The lines, in FUZZ_TARGETS order, and a total go to $(FUZZ_BUILD)/fuzz-summary.txt.
FUZZ_JOBS ?= 1
fuzz: fuzz-build
	@rm -f $(FUZZ_BUILD)/fuzz-*.summary; \
	printf '%s\n' $(FUZZ_TARGETS) | $(SAN_ENV) xargs -P $(FUZZ_JOBS) -I{} \
	  fuzz/run.sh $(FUZZ_BUILD) {} $(FUZZ_RUNS) $(FUZZ_SECONDS) $(FUZZ_SEED); rc=$$?; \
	for t in $(FUZZ_TARGETS); do cat $(FUZZ_BUILD)/fuzz-$$t.summary 2>/dev/null || echo "$$t: not run"; \
	done > $(FUZZ_BUILD)/fuzz-summary.txt; \
	awk '{n += $$2; c += $$(NF - 3)} END {printf "total: %d inputs over %d parsers, %d crashes\n", n, NR, c}' \
	  $(FUZZ_BUILD)/fuzz-summary.txt | tee -a $(FUZZ_BUILD)/fuzz-summary.txt; \
	exit $$rc

# A time-boxed fuzz run (30 s per parser).
fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30

# The sanitizer check in CI (.ci/run, after `make test`): the library and the libFuzzer harness
# in an ASan + UBSan build at -O1 with line tables and precompiled headers (no tests, no CLI),
# then every parser of FUZZ_TARGETS for SANITIZE_CI_SECONDS from the committed seeds. Any
# sanitizer report, contract break, leak, hang or crash fails it (docs/INPUTS.md, "Sanitizer
# build", has the measured times).
SANITIZE_CI_BUILD ?= build-sanitize-ci
SANITIZE_CI_SECONDS ?= 20
SANITIZE_CI_SEED ?= 1
sanitize-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_BUILD=$(SANITIZE_CI_BUILD) \
	  FUZZ_SECONDS=$(SANITIZE_CI_SECONDS) FUZZ_SEED=$(SANITIZE_CI_SEED) \
	  FUZZ_CMAKE_EXTRA='"-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DTRAINSIM_PCH=ON'

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD)
