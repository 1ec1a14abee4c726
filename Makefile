# SPDX-License-Identifier: BSD-3-Clause
# Thin wrapper over meson and ninja. See README.md.

BUILDDIR ?= build
MESON_OPTS ?=
# As meson.build's default, for build folders set up before it was one: the
# installed .pc file finds its prefix from its own folder (docs/building.md).
MESON_OPTS += -Dpkgconfig.relocatable=true
# As meson.build's default too: link-time optimisation, but not for the
# sanitizer build (it measures nothing, and links faster without).
ifeq ($(SANITIZE),1)
MESON_OPTS += -Db_lto=false
else
MESON_OPTS += -Db_lto=true
endif
ifeq ($(CI),true)
MESON_OPTS += -Dwerror=true
endif
# AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer: scripts/test.sh
# sets their options (docs/reliability.md). b_lundef=false: the sanitizer
# runtimes resolve some symbols only at run time.
ifeq ($(SANITIZE),1)
BUILDDIR := build-san
MESON_OPTS += -Db_sanitize=address,undefined -Db_lundef=false
endif
# libFuzzer harnesses (fuzz/): a clang build of their own, each run for
# FUZZ_SECONDS (docs/reliability.md).
FUZZ_BUILDDIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_MESON_OPTS ?=
ifeq ($(CI),true)
FUZZ_MESON_OPTS += -Dwerror=true
endif

.PHONY: all deps deps-fuzz deps-bench deps-deb hugepages setup run test bench-events fuzz \
	check-abi deb check-deb format clean

all: setup
	ninja -C $(BUILDDIR)

# What make run and make test need; fuzzing and the benchmark's plots need
# more (scripts/deps.sh).
deps:
	@scripts/deps.sh

deps-fuzz:
	@scripts/deps.sh fuzz

deps-bench:
	@scripts/deps.sh bench

deps-deb:
	@scripts/deps.sh deb

hugepages:
	@scripts/hugepages.sh

setup: deps
	@if [ ! -f $(BUILDDIR)/build.ninja ]; then \
		meson setup $(BUILDDIR) $(MESON_OPTS); \
	else \
		meson configure $(BUILDDIR) $(MESON_OPTS) >/dev/null; \
	fi

# Only what smoke/run.sh runs, not the tests, fuzzers and benchmarks: the
# first figure comes sooner on a fresh clone (docs/building.md). make and
# make test build the rest in the same folder.
RUN_TARGETS = main/shmchand smoke/ping2_perf
run: setup hugepages
	ninja -C $(BUILDDIR) $(RUN_TARGETS)
	smoke/run.sh $(BUILDDIR)

test: all hugepages
	scripts/test.sh $(BUILDDIR)

# Event fan-out: 1/4/16 subscribers, shm and socket, 64 B and 4 KiB.
bench-events: all hugepages
	smoke/event_bench.sh $(BUILDDIR)

fuzz: deps-fuzz
	fuzz/run.sh $(FUZZ_BUILDDIR) $(FUZZ_SECONDS) $(FUZZ_MESON_OPTS)

# ping2 from Python: the shmchan package on shm and on the socket, the
# socket module, and C (docs/python.md).
.PHONY: bench-python
bench-python: all hugepages
	python/bench.sh $(BUILDDIR)

# The full benchmark (docs/benchmark-running.md): results/<timestamp>/, plots, goals.
.PHONY: bench bench-loaded
bench: deps-bench all hugepages
	smoke/bench.sh $(BUILDDIR)

# The shared libraries' ABI against the baseline in abi/ (docs/packaging.md);
# scripts/check-abi.sh --update rewrites it.
check-abi: setup
	scripts/check-abi.sh $(BUILDDIR)

# The Debian packages, into build-deb/, checked by lintian; check-deb
# unpacks them into a staging root and runs them (docs/packaging.md).
deb: deps deps-deb
	scripts/build-deb.sh build-deb

check-deb:
	@[ -f build-deb/shmchand_$$(dpkg-parsechangelog -S Version)_$$(dpkg-architecture -qDEB_HOST_ARCH).deb ] || \
		$(MAKE) deb
	test/deb_packages.sh build-deb

# Its loaded host alone (docs/performance.md): results/<timestamp>-loaded/.
bench-loaded: deps-bench all hugepages
	smoke/bench.sh $(BUILDDIR) loaded

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san build-bench-* build-deb $(FUZZ_BUILDDIR)
