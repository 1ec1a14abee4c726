# SPDX-License-Identifier: BSD-3-Clause
# Thin wrapper over meson and ninja. See README.md.

BUILDDIR ?= build
MESON_OPTS ?=
ifeq ($(CI),true)
MESON_OPTS += -Dwerror=true
endif
ifeq ($(SANITIZE),1)
BUILDDIR := build-san
MESON_OPTS += -Db_sanitize=address,undefined -Db_lundef=false
endif

.PHONY: all deps hugepages setup run test bench-socket format clean

all: setup
	ninja -C $(BUILDDIR)

deps:
	@scripts/deps.sh

hugepages:
	@scripts/hugepages.sh

setup: deps
	@if [ ! -f $(BUILDDIR)/build.ninja ]; then \
		meson setup $(BUILDDIR) $(MESON_OPTS); \
	else \
		meson configure $(BUILDDIR) $(MESON_OPTS) >/dev/null; \
	fi

run: all hugepages
	smoke/run.sh $(BUILDDIR)

test: all hugepages
	scripts/test.sh $(BUILDDIR)

bench-socket: deps hugepages
	smoke/bench_socket.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san build-bench-*
