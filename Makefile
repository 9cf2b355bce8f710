# SPDX-License-Identifier: GPL-2.0
#
# sdsm top-level Makefile.  `make` builds the module against the Debian
# kernel the test guests run, plus every user-space part.  See README.rst.

KVER	?= $(shell tools/kver.sh 2>/dev/null)
KDIR	?= /usr/src/linux-headers-$(KVER)
CACHE	:= $(CURDIR)/.cache
SRCTAR	:= /usr/src/linux-source-6.1.tar.xz
SRCDIR	:= $(CACHE)/linux-source

CC	?= gcc
CFLAGS	?= -O2 -g
CFLAGS	+= -Wall -Wextra -Werror=implicit-function-declaration -std=gnu11
export CC CFLAGS KVER KDIR CACHE SRCDIR

# Kernel and uapi sources that checkpatch and sparse judge.
KSRC	= $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/*.h)) \
	  uapi/linux/sdsm.h

.PHONY: all deps module userspace linux-source checkpatch sparse unit \
	selftests check demo bench clean

all: module userspace

deps:
	@tools/deps.sh

module: deps
	@test -n "$(KVER)" || { echo "no kernel headers; run make deps" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# Pieces of linux-source-6.1 we use but never commit: checkpatch and the
# kselftest harness.  Extracted once into .cache/.
linux-source: $(SRCDIR)/.stamp
$(SRCDIR)/.stamp: | deps
	@mkdir -p $(SRCDIR)
	tar -C $(SRCDIR) --strip-components=1 -xf $(SRCTAR) \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	@touch $@

userspace: selftests unit-build userlib sdsmctl bench-build

# Benchmark programs (tools/bench/); `make bench` runs them in a cluster.
bench-build: userlib
	$(MAKE) --no-print-directory -C tools/bench

# libsdsm and sdsmctl (userlib/, tools/sdsmctl/).
userlib:
	$(if $(wildcard userlib/Makefile),$(MAKE) --no-print-directory -C userlib)

sdsmctl: userlib
	$(if $(wildcard tools/sdsmctl/Makefile),$(MAKE) --no-print-directory -C tools/sdsmctl)

selftests: linux-source
	$(MAKE) --no-print-directory -C selftests/sdsm

unit-build:
	$(MAKE) --no-print-directory -C tests/host

unit: unit-build
	$(MAKE) --no-print-directory -C tests/host run

checkpatch: linux-source
	$(SRCDIR)/scripts/checkpatch.pl --strict --no-tree --terse \
		--show-types -f $(KSRC)
	@echo "checkpatch: $(words $(KSRC)) files clean"

sparse: deps
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 CHECK="sparse -Wno-decl" \
		modules 2>&1 | tee $(CACHE)/sparse.log
	@! grep -E '(warning|error):' $(CACHE)/sparse.log

check:
	@tools/check.sh

demo: all
	@tools/demo.sh

bench: all
	@tools/bench.sh

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	-$(MAKE) -C selftests/sdsm clean
	-$(MAKE) -C tests/host clean
	-$(if $(wildcard userlib/Makefile),$(MAKE) -C userlib clean)
	-$(if $(wildcard tools/sdsmctl/Makefile),$(MAKE) -C tools/sdsmctl clean)
	-$(MAKE) -C tools/bench clean
	rm -rf build out
.PHONY: unit-build userlib sdsmctl bench-build
