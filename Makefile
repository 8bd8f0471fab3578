# The two commands of the README, and the developer targets around them.
# Every target installs missing Debian packages first (scripts/install-deps.sh).

BUILD_DIR ?= build
ASAN_DIR  ?= build-asan
JOBS      ?= 2
PREFIX    ?= /usr/local
CMAKE_GEN := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
SOURCES    = $(shell git ls-files '*.cpp' '*.h' 2>/dev/null)

.PHONY: run test deps build configure test-asan bench format check-format tidy install clean

run: build
	$(BUILD_DIR)/apps/etsim demo

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD_DIR) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD_DIR)/CMakeCache.txt

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# Unit tests under AddressSanitizer and UndefinedBehaviorSanitizer, in their own build.
# use_stacks=0: LeakSanitizer's exit-time scan crashes now and then (signal 11 in its tracer)
# on the stacks SystemC's QuickThreads switch between; seen in 3 of 10 runs of a bare
# SC_THREAD program, none with the option.
test-asan: deps
	cmake -S . -B $(ASAN_DIR) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DETSIM_SANITIZE=address,undefined -DETSIM_BUILD_BENCH=OFF
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=use_stacks=0 ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS) -L unit

bench: build
	bench/run.sh $(BUILD_DIR)

format: deps
	@clang-format -i $(SOURCES)

check-format: deps
	@clang-format --dry-run --Werror $(SOURCES) && echo "check-format: $(words $(SOURCES)) files formatted"

# clang-tidy on the .cpp files changed since TIDY_BASE (default: the branch point with
# origin/main, else the root commit), at most TIDY_MAX of them.
TIDY_BASE ?=
TIDY_MAX  ?= 1000
tidy: configure
	@scripts/install-deps.sh lint
	scripts/tidy-changed.sh $(BUILD_DIR) $(if $(TIDY_BASE),$(TIDY_BASE),"") $(TIDY_MAX)

install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
