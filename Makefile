# The front door. `make run` and `make test` work on a fresh Debian 12 machine:
# both install what is missing (scripts/install_deps.sh), then build.
#
#   make build   Release build -> build/bin/mneme
#   make run     install, build, run the main job
#   make test    install, build, run every test (ASan+UBSan unit tests, the
#                GGUF fuzzer for a bounded time, then unit, golden and
#                end-to-end tests of the Release build; ends with CTest's summary)
#   make bench   tokenizer benchmark against llama.cpp (node-llama-cpp)
#   make bench-engine  engine speed (pp512/tg128) against llama.cpp; QUICK=1: 134M models only
#   make bench-kv      prefix cache + continuous batching (multi-turn TTFT, shared prompt, batching)

JOBS ?= 2
FUZZ_SECONDS ?= 60
CMAKE_FLAGS := -G Ninja -DMNEME_WERROR=ON

.PHONY: all deps build asan fuzz run test bench bench-engine bench-kv format tidy clean

all: build

deps:
	@./scripts/install_deps.sh

build:
	@cmake -S . -B build $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build build -j $(JOBS)

asan:
	@cmake -S . -B build-asan $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMNEME_SANITIZE=ON -DMNEME_BUILD_BENCHMARKS=OFF >/dev/null
	@cmake --build build-asan -j $(JOBS)

fuzz:
	@CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMNEME_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
	@./scripts/run_fuzz.sh build-fuzz/bin/gguf_fuzzer src/gguf/fuzz_corpus $(FUZZ_SECONDS)

DEMO_MODEL ?=

# The main job: `mneme serve` on 127.0.0.1:8080 (PORT=...), on a random-weight
# demo model made by `mneme make-model` unless DEMO_MODEL=path/to/model.gguf.
run: deps build
	@./scripts/run_demo.sh "$(DEMO_MODEL)"

test: deps build asan
	@echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir build-asan -L unit --output-on-failure -j $(JOBS)
	@echo "== GGUF reader fuzzing ($(FUZZ_SECONDS) s) =="
	@$(MAKE) --no-print-directory fuzz
	@echo "== unit, golden and end-to-end tests (Release) =="
	ctest --test-dir build --output-on-failure -j $(JOBS)

bench: deps build
	./scripts/bench_tokenizer.sh

bench-engine: deps build
	./scripts/bench_engine.sh

bench-kv: deps build
	./scripts/bench_kv.sh

format:
	@git ls-files '*.cc' '*.h' | xargs clang-format -i

tidy: build
	@git ls-files 'src/*.cc' | xargs clang-tidy -p build --quiet

clean:
	rm -rf build build-asan build-fuzz
