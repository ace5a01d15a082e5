# The two set-up commands of the README: `make demo` and `make test`. Both install what they need
# (Debian packages), configure, build and run. Installing is idempotent.
BUILD ?= build
JOBS ?= $(shell nproc)
APT_PACKAGES = build-essential cmake nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev \
               libgmock-dev libbenchmark-dev libtomlplusplus-dev python3 \
               libopenmpi-dev openmpi-bin

.PHONY: deps build demo test bench validate format clean

deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
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

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD)
