# Entry points.  Each target installs what it needs first (tools/setup.sh).
#   make run    compile the bundled default model, build it, run it
#   make test   build and run the whole test suite (unit, models, conformance)
#   make build  configure and build into build/
#   make install  burncc, libburn (burn.h, libburn.a, libburn.so), the
#               pkg-config files burncc.pc and burn.pc and the CMake package
#               (find_package(burncc)) under PREFIX (default /usr/local;
#               DESTDIR is honoured)
#   make test-sanitize  the whole suite under ASan+UBSan+LSan, in build-san/
#   make fuzz   build the libFuzzer targets in build-fuzz/, run each
#               FUZZ_SECONDS (default 60); see docs/RELIABILITY.md; then
#               random graphs of the differential tests for FUZZ_SECONDS
#               from a fresh seed, reduced to build/diff-failures/ when
#               they disagree (docs/NUMERICS.md)
BUILD ?= build
PREFIX ?= /usr/local
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all setup build run test clean test-sanitize fuzz install

all: build

setup:
	@sh tools/setup.sh

$(BUILD)/CMakeCache.txt: | setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: setup $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

run: build
	@sh examples/run.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

SAN_BUILD    ?= build-san
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60

# ASan+UBSan build of everything; LeakSanitizer checks burncc itself (the
# generated C that `burncc check` builds is compiled without sanitizers).
test-sanitize: setup
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBURN_SANITIZE=ON >/dev/null
	cmake --build $(SAN_BUILD) -j $(JOBS)
	cd $(SAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j $(JOBS)

fuzz: setup build
	@sh tools/setup.sh fuzz
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)
	@sh tests/diff/run.sh $(BUILD) random --graphs 1000000 --seed $$(date +%s) \
		--time-limit $(FUZZ_SECONDS) --out $(BUILD)/diff-failures

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(FUZZ_BUILD)
