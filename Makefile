# SPDX-License-Identifier: GPL-2.0
#
# sdsm top-level Makefile.  `make` builds the module and the user-space
# tools; it needs only a compiler and the headers of the kernel it builds for,
# no root and no apt.  `make check`, `make demo` and `make bench` install
# what testing needs first (tools/deps.sh).  See README.md.
#
# The kernel: the newest Debian kernel with image and headers (the one the
# test guests boot, tools/kver.sh), else the running kernel's build tree, as
# for any out-of-tree module; KVER= or KDIR= on the command line override.
# Both are recursive variables, never exported: a recipe that installs the
# headers (deps) runs before the child make that needs them, and that child
# must look again rather than inherit the empty value found at start.

KVER	?= $(shell tools/kver.sh 2>/dev/null || \
		{ r=$$(uname -r); [ -d /lib/modules/$$r/build ] && echo $$r; })
KDIR	?= $(firstword $(wildcard /usr/src/linux-headers-$(KVER) \
				  /lib/modules/$(KVER)/build))
CACHE	:= $(CURDIR)/.cache
SRCTAR	:= /usr/src/linux-source-6.1.tar.xz
SRCDIR	:= $(CACHE)/linux-source

CC	?= gcc
CFLAGS	?= -O2 -g
CFLAGS	+= -Wall -Wextra -Werror=implicit-function-declaration -std=gnu11
export CC CFLAGS CACHE SRCDIR

# Kernel and uapi sources that checkpatch and sparse judge.
KSRC	= $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/*.h)) \
	  uapi/linux/sdsm.h

.PHONY: all deps module module-debug kdir userspace tests linux-source checkpatch sparse \
	unit selftests check demo bench fuzz clean install install-dkms deb \
	check-install

# Installing (`make install DESTDIR=... PREFIX=...`, README.md): user space
# under PREFIX, configuration under SYSCONFDIR, the module's source for
# DKMS under DKMSDIR.  The directories udev, modprobe and systemd read are
# fixed by them, not by PREFIX; a distribution package passes its own.
# systemd reads sysusers.d and sysctl.d under /usr/local/lib as well.
VERSION		:= $(shell cat VERSION)
PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
SBINDIR		?= $(PREFIX)/sbin
LIBDIR		?= $(PREFIX)/lib
INCDIR		?= $(PREFIX)/include
MANDIR		?= $(PREFIX)/share/man
DATADIR		?= $(PREFIX)/share
PRELOADDIR	?= $(LIBDIR)
SYSCONFDIR	?= /etc
UNITDIR		?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR	?= $(PREFIX)/lib/sysusers.d
SYSCTLDIR	?= $(PREFIX)/lib/sysctl.d
UDEVRULESDIR	?= $(SYSCONFDIR)/udev/rules.d
MODPROBEDIR	?= $(SYSCONFDIR)/modprobe.d
DKMSDIR		?= /usr/src/sdsm-$(VERSION)
INSTALL_VARS	= PREFIX=$(PREFIX) BINDIR=$(BINDIR) SBINDIR=$(SBINDIR) LIBDIR=$(LIBDIR) \
		  INCDIR=$(INCDIR) MANDIR=$(MANDIR) PRELOADDIR=$(PRELOADDIR)

all: module userspace

deps:
	@tools/deps.sh

kdir:
	@test -n "$(KDIR)" || { echo "no kernel headers found: install" \
		"linux-headers-$$(uname -r), or run make deps (root) for" \
		"the kernel the test guests boot" >&2; exit 1; }

module: kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

# $(call shadow_tree,DIR): the module's sources copied into DIR, a tree of
# its own to build in, so that a build there leaves the tree's sdsm.ko (the
# one the test guests load) alone.
shadow_tree = rm -rf $(1) && mkdir -p $(1)/kmod $(1)/uapi/linux && \
	cp Kbuild VERSION $(1)/ && cp kmod/Kbuild kmod/*.c kmod/*.h $(1)/kmod/ && \
	rm -f $(1)/kmod/*.mod.c && cp uapi/linux/sdsm.h $(1)/uapi/linux/

# The module for the debug kernel of the cluster tests (tools/kernel/,
# built once and cached outside the tree): the same sources built in a
# shadow tree, .cache/kmod-debug/kmod/sdsm.ko, so both modules coexist.
DEBUG_KO := $(CACHE)/kmod-debug/kmod/sdsm.ko
module-debug:
	@dir=$$(tools/kernel/build.sh) || exit 1; \
	$(call shadow_tree,$(CACHE)/kmod-debug) && \
	$(MAKE) -C $$dir/src M=$(CACHE)/kmod-debug W=1 modules

# Pieces of linux-source-6.1 we use but never commit: checkpatch and the
# kselftest harness.  Extracted once into .cache/; the tarball is a test
# dependency, installed by deps only when it is missing.
linux-source: $(SRCDIR)/.stamp $(SRCDIR)/.stamp-runner
$(SRCTAR):
	@tools/deps.sh
$(SRCDIR)/.stamp: $(SRCTAR)
	@mkdir -p $(SRCDIR)
	tar -C $(SRCDIR) --strip-components=1 -xf $(SRCTAR) \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	@touch $@
# The kselftest runner (make -C selftests/sdsm run_tests).
$(SRCDIR)/.stamp-runner: $(SRCTAR)
	@mkdir -p $(SRCDIR)
	tar -C $(SRCDIR) --strip-components=1 -xf $(SRCTAR) \
		linux-source-6.1/tools/testing/selftests/kselftest/runner.sh \
		linux-source-6.1/tools/testing/selftests/kselftest/prefix.pl
	@touch $@

userspace: userlib sdsmctl bench-build

# What the tests run: kselftests (which need the harness from linux-source)
# and the host test programs.
tests: selftests unit-build

# Benchmark programs (tools/bench/); `make bench` runs them in a cluster.
bench-build: userlib
	$(MAKE) --no-print-directory -C tools/bench

# libsdsm and sdsmctl (userlib/, tools/sdsmctl/).  sdsmctl has the
# install paths built in: build and install with the same variables.
userlib:
	$(if $(wildcard userlib/Makefile),$(MAKE) --no-print-directory -C userlib)

sdsmctl: userlib
	$(if $(wildcard tools/sdsmctl/Makefile),$(MAKE) --no-print-directory \
		-C tools/sdsmctl $(INSTALL_VARS))

# Everything but the module, which DKMS builds from the installed source
# for each kernel (or: make module, then insmod kmod/sdsm.ko).
install: install-dkms
	$(MAKE) --no-print-directory -C userlib install $(INSTALL_VARS)
	$(MAKE) --no-print-directory -C tools/sdsmctl install $(INSTALL_VARS)
	install -d $(DESTDIR)$(SYSCONFDIR)/sdsm $(DESTDIR)$(DATADIR)/sdsm \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(UDEVRULESDIR) \
		$(DESTDIR)$(MODPROBEDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(SYSCTLDIR)
	install -m 644 packaging/cluster.conf \
		$(DESTDIR)$(DATADIR)/sdsm/cluster.conf.example
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		packaging/sdsm.service.in > $(DESTDIR)$(UNITDIR)/sdsm.service
	chmod 644 $(DESTDIR)$(UNITDIR)/sdsm.service
	install -m 644 packaging/60-sdsm.rules $(DESTDIR)$(UDEVRULESDIR)/
	install -m 644 packaging/modprobe.conf $(DESTDIR)$(MODPROBEDIR)/sdsm.conf
	install -m 644 packaging/sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/sdsm.conf
	install -m 644 packaging/sysctl.conf $(DESTDIR)$(SYSCTLDIR)/60-sdsm.conf

# The module's source as DKMS wants it: the tree's Kbuild layout, VERSION
# and dkms.conf with the version filled in.
DKMS_SRC := Kbuild VERSION uapi/linux/sdsm.h kmod/Kbuild \
	    $(filter-out %.mod.c,$(wildcard kmod/*.c kmod/*.h))
install-dkms:
	install -d $(DESTDIR)$(DKMSDIR)/kmod $(DESTDIR)$(DKMSDIR)/uapi/linux
	for f in $(DKMS_SRC); do install -m 644 $$f $(DESTDIR)$(DKMSDIR)/$$f \
		|| exit 1; done
	sed 's|@VERSION@|$(VERSION)|' dkms.conf > $(DESTDIR)$(DKMSDIR)/dkms.conf
	chmod 644 $(DESTDIR)$(DKMSDIR)/dkms.conf

# Debian packages (sdsm-dkms, libsdsm1, libsdsm-dev, sdsm-tools) with
# debhelper, into out/deb/, and lintian on them.  Needs the packaging tools
# (tools/deps.sh deb).
deb:
	@tools/deps.sh deb
	tools/mkdeb.sh

# Host test of `make install` and `make deb` (TAP).
check-install:
	tests/build/test_install.sh

selftests: linux-source
	$(MAKE) --no-print-directory -C selftests/sdsm

# The host tests link libsdsm.so.1 (test_userlib): userlib first, also
# under make -j.
unit-build: userlib
	$(MAKE) --no-print-directory -C tests/host

unit: unit-build
	$(MAKE) --no-print-directory -C tests/host run

checkpatch: linux-source
	$(SRCDIR)/scripts/checkpatch.pl --strict --no-tree --terse \
		--show-types -f $(KSRC)
	@echo "checkpatch: $(words $(KSRC)) files clean"

# sparse checks every file of a build in a shadow tree (.cache/kmod-sparse),
# so that make check can run it beside guests that load the tree's module;
# its messages name the tree's files.
SPARSE_TREE := $(CACHE)/kmod-sparse
sparse: kdir
	@$(call shadow_tree,$(SPARSE_TREE))
	$(MAKE) -C $(KDIR) M=$(SPARSE_TREE) C=2 CHECK="sparse -Wno-decl" \
		modules 2>&1 | sed 's|$(SPARSE_TREE)/||g' | tee $(CACHE)/sparse.log
	@! grep -E '(warning|error):' $(CACHE)/sparse.log

check:
	@tools/check.sh

# deps first, then a separate make: it finds the headers deps installed.
demo: deps
	@$(MAKE) --no-print-directory all tests
	@tools/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all tests
	@tools/bench.sh

# The long run of the fuzzer of /dev/sdsm: 10^6 calls over 3 nodes, on the
# debug kernel if it is cached (Documentation/testing.rst).
fuzz: deps
	@$(MAKE) --no-print-directory all tests
	@tools/fuzz.sh

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	-$(MAKE) -C selftests/sdsm clean
	-$(MAKE) -C tests/host clean
	-$(if $(wildcard userlib/Makefile),$(MAKE) -C userlib clean)
	-$(if $(wildcard tools/sdsmctl/Makefile),$(MAKE) -C tools/sdsmctl clean)
	-$(MAKE) -C tools/bench clean
	rm -rf build out
.PHONY: unit-build userlib sdsmctl bench-build
