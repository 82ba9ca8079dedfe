# libdcache - plain GNU make (see docs/design.md, "Build").
#
#   make              library, tools, tests, examples   -> build/
#   make check        deps, then every test: plain, ASan+UBSan, TSan
#   make run          deps, build, import the shipped trace, dcbench compare
#   make lib          the library alone (needs liburcu only)
#   make install      library, headers, tools, man pages, data
#   make install-lib  library, headers and dcache.pc alone
#   make uninstall    what either install put there
#
# PREFIX (/usr/local), LIBDIR ($(PREFIX)/lib; a multiarch one such as
# /usr/lib/x86_64-linux-gnu), INCLUDEDIR, BINDIR, MANDIR, DATADIR and
# DESTDIR place what install copies; dcache.pc follows them.
#
# SAN=asan or SAN=tsan builds an instrumented tree in build-asan/ or
# build-tsan/ (the check target does that itself).

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
DATADIR    ?= $(PREFIX)/share/dcache
SAN        ?=
CC         ?= cc
PKG_CONFIG ?= pkg-config
# one version, the header's
VERSION   := $(shell sed -n 's/^\#define DC_VERSION_STRING[^"]*"\(.*\)"/\1/p' include/dcache.h)
SOVERSION := 0

ifeq ($(SAN),)
BUILD     ?= build
OPT       ?= -O2
SANFLAGS  :=
else ifeq ($(SAN),asan)
BUILD     ?= build-asan
OPT       ?= -O1
SANFLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SAN),tsan)
BUILD     ?= build-tsan
OPT       ?= -O1
SANFLAGS  := -fsanitize=thread
# gcc warns that TSan does not model fences; our seqlock's fences order
# relaxed atomics only, which TSan never reports, so the warning is noise.
CFLAGS_EXTRA := $(shell $(CC) -Wno-tsan -E -x c /dev/null >/dev/null 2>&1 && echo -Wno-tsan)
else
$(error SAN must be empty, asan or tsan)
endif

# pkg-config's answers are read when a recipe first needs them, not when
# this file is parsed, so that `make check` and `make run` can install
# what is missing (deps) first, and `make lib` asks only for liburcu.  A
# package pkg-config cannot find stops the build there, by name.
pkg = $(if $(shell $(PKG_CONFIG) --exists $(1) && echo y),$(shell $(PKG_CONFIG) $(2) $(1)),$(error $(1) not found by $(PKG_CONFIG): as root, run make deps (it installs every package the project needs), or install the package that provides $(1).pc))
# once per make: the first use replaces the variable by its value
memo = $(eval $(1) := $(2))$($(1))

URCU_CFLAGS = $(call memo,URCU_CFLAGS,$(call pkg,liburcu-memb,--cflags))
URCU_LIBS   = $(call memo,URCU_LIBS,$(call pkg,liburcu-memb,--libs))
CDS_LIBS    = $(call memo,CDS_LIBS,$(call pkg,liburcu-cds,--libs))
LZMA_LIBS   = $(call memo,LZMA_LIBS,$(call pkg,liblzma,--libs))
FUSE_CFLAGS = $(call memo,FUSE_CFLAGS,$(call pkg,fuse3,--cflags))
FUSE_LIBS   = $(call memo,FUSE_LIBS,$(call pkg,fuse3,--libs))
SECCOMP_CFLAGS = $(call memo,SECCOMP_CFLAGS,$(call pkg,libseccomp,--cflags))
SECCOMP_LIBS   = $(call memo,SECCOMP_LIBS,$(call pkg,libseccomp,--libs))

CFLAGS   ?= $(OPT) -g
CFLAGS   += -std=c11 -Wall -Wextra -Wno-missing-field-initializers $(SANFLAGS) $(CFLAGS_EXTRA) $(WERROR)
CPPFLAGS += -D_GNU_SOURCE -Iinclude $(URCU_CFLAGS)
LDFLAGS  += $(SANFLAGS)
LIBS      = $(URCU_LIBS) -lpthread

LIB_SRCS := $(wildcard src/*.c)
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/obj/%.o)
LIB_PIC  := $(LIB_SRCS:src/%.c=$(BUILD)/pic/%.o)

TEST_SRCS := $(wildcard tests/test_*.c)
TESTS     := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

DCBENCH_SRCS := $(shell find tools/dcbench -name '*.c' ! -name import_main_test.c)
DCBENCH_HDRS := $(shell find tools/dcbench -name '*.h')

CORPUS_TESTS := $(BUILD)/tests/test_corpus_walk $(BUILD)/tests/test_corpus_import

DCFS_SRCS   := tools/dcfs/main.c tools/dcfs/loop.c tools/dcfs/node.c tools/dcfs/ops.c \
               tools/dcfs/coherence.c \
               tools/dcfs/uring.c tools/dcfs/sandbox.c

EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLES     := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)

all: lib $(BUILD)/dcpath $(TESTS) $(CORPUS_TESTS) $(BUILD)/dcfs $(BUILD)/dcbench $(EXAMPLES)

lib: $(BUILD)/libdcache.a $(BUILD)/libdcache.so $(BUILD)/dcache.pc

HEADERS := include/dcache.h include/dcache-debug.h

$(BUILD)/obj/%.o: src/%.c src/internal.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/pic/%.o: src/%.c src/internal.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/libdcache.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

# Only dc_* names leave the shared library (libdcache.map).
$(BUILD)/libdcache.so.$(VERSION): $(LIB_PIC) libdcache.map
	$(CC) -shared -Wl,-soname,libdcache.so.$(SOVERSION) \
	    -Wl,--version-script=libdcache.map $(LDFLAGS) -o $@ $(LIB_PIC) $(LIBS)

$(BUILD)/libdcache.so: $(BUILD)/libdcache.so.$(VERSION)
	ln -sf libdcache.so.$(VERSION) $(BUILD)/libdcache.so.$(SOVERSION)
	ln -sf libdcache.so.$(VERSION) $@

# dcache.pc names where install puts things: remade whenever they change
# (the stamp is rewritten only when its text differs).
DIRS_NOW := $(PREFIX) $(LIBDIR) $(INCLUDEDIR)
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(BUILD)/install-dirs 2>/dev/null)" = "$(DIRS_NOW)" ] || echo "$(DIRS_NOW)" > $(BUILD)/install-dirs; })

$(BUILD)/dcache.pc: dcache.pc.in $(BUILD)/install-dirs include/dcache.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(BUILD)/dcpath: tools/dcpath/dcpath.c $(BUILD)/libdcache.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

$(BUILD)/dcbench: $(DCBENCH_SRCS) $(DCBENCH_HDRS) $(BUILD)/libdcache.a
	$(CC) $(CPPFLAGS) -Itools -Itools/dcbench $(CFLAGS) $(DCBENCH_SRCS) -o $@ \
	    $(LDFLAGS) $(BUILD)/libdcache.a $(CDS_LIBS) $(LIBS) $(LZMA_LIBS) -lm

$(BUILD)/tests/test_import: tests/test_import.c tools/dcbench/import.c tools/dcbench/trace.c tools/dcbench/*.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itools/dcbench $(CFLAGS) $(filter %.c,$^) -o $@ $(LDFLAGS) $(LZMA_LIBS)

$(BUILD)/tests/%: tests/%.c tests/harness.h $(HEADERS) $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $< -o $@ $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

$(BUILD)/tests/test_torture: tests/test_torture.c tools/dcbench/torture.c tools/dcbench/torture.h tests/harness.h $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests -Itools/dcbench $(CFLAGS) $(filter %.c,$^) -o $@ \
	    $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

$(BUILD)/tests/test_writers: tests/test_writers.c tools/dcbench/floodnames.c tools/dcbench/flood.h tests/harness.h $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests -Itools/dcbench $(CFLAGS) $(filter %.c,$^) -o $@ \
	    $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

# dcfs's node table alone, with its race window staged (no mount)
$(BUILD)/tests/test_node: tests/test_node.c tools/dcfs/node.c tools/dcfs/dcfs.h tests/harness.h $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FUSE_CFLAGS) -DNODE_RACE_WINDOW -Itests -Itools/dcfs $(CFLAGS) \
	    $(filter %.c,$^) -o $@ $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

# test_replay includes the replay engine's sources; rebuild when they change
$(BUILD)/tests/test_replay: tools/dcbench/replay.c tools/dcbench/replay.h tools/dcbench/trace.c tools/dcbench/trace.h

# Fuzz corpora replayed as plain regression tests (no libFuzzer needed).
$(BUILD)/tests/test_corpus_walk: tests/fuzz/fuzz_walk.c tests/fuzz/run_corpus.c tests/fuzz/fuzz.h $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DCORPUS_DIR='"tests/fuzz/corpus_walk"' $(CFLAGS) $(filter %.c,$^) \
	    -o $@ $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

$(BUILD)/tests/test_corpus_import: tests/fuzz/fuzz_import.c tests/fuzz/run_corpus.c tools/dcbench/import.c tools/dcbench/trace.c tests/fuzz/fuzz.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itools/dcbench -DCORPUS_DIR='"tests/fuzz/corpus_import"' $(CFLAGS) \
	    $(filter %.c,$^) -o $@ $(LDFLAGS) $(LZMA_LIBS)

# The examples, as a user builds them (tests/test_install.sh builds them
# again against the installed library).
$(BUILD)/examples/%: examples/%.c $(HEADERS) $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

# ---- fuzzing (clang, libFuzzer): FUZZ_SECONDS per target ----------------------

FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

fuzz: deps
	@mkdir -p build-fuzz/corpus_walk build-fuzz/corpus_import
	clang -std=c11 $(CPPFLAGS) $(FUZZ_FLAGS) tests/fuzz/fuzz_walk.c $(LIB_SRCS) \
	    -o build-fuzz/fuzz_walk $(LIBS)
	clang -std=c11 $(CPPFLAGS) -Itools/dcbench $(FUZZ_FLAGS) tests/fuzz/fuzz_import.c \
	    tools/dcbench/import.c tools/dcbench/trace.c -o build-fuzz/fuzz_import $(LZMA_LIBS)
	cd build-fuzz && ./fuzz_walk -max_total_time=$(FUZZ_SECONDS) -dict=../tests/fuzz/walk.dict \
	    corpus_walk ../tests/fuzz/corpus_walk
	cd build-fuzz && ./fuzz_import -max_total_time=$(FUZZ_SECONDS) \
	    corpus_import ../tests/fuzz/corpus_import

# ---- the long torture: TORTURE_SECONDS per mode (default 10 minutes) -----------

TORTURE_SECONDS ?= 600
torture: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/dcbench torture --seconds $(TORTURE_SECONDS) --mode all

# ---- dcfs: the FUSE passthrough file system on libdcache ----------------------

$(BUILD)/dcfs: $(DCFS_SRCS) tools/dcfs/dcfs.h $(BUILD)/libdcache.a
	$(CC) $(CPPFLAGS) $(FUSE_CFLAGS) $(SECCOMP_CFLAGS) $(CFLAGS) $(DCFS_SRCS) -o $@ \
	    $(LDFLAGS) $(BUILD)/libdcache.a $(FUSE_LIBS) $(SECCOMP_LIBS) $(LIBS)

# ---- kernbench: a kernel build natively and through dcfs -------------------

# bench/kernbench-setup.sh unpacks Debian's linux-source-6.1 and runs
# tinyconfig; KERNBENCH_ARGS adds dcbench kernbench options.
KERNBENCH_DIR ?= /var/tmp/dcache-kernbench
KERNBENCH_ARGS ?=
kernbench: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/dcbench kernbench --tree "$$(bench/kernbench-setup.sh $(KERNBENCH_DIR))" $(KERNBENCH_ARGS)

# ---- the README's commands -------------------------------------------------
#
# Targets that need what deps installs build through a second make: this one
# read pkg-config's answers (FUSE_CFLAGS, ...) before deps ran.

deps:
	@scripts/deps.sh

check: deps
	@scripts/check.sh

run: deps
	@$(MAKE) --no-print-directory all
	@scripts/run.sh

MAN1 := $(wildcard man/*.1)
MAN3 := $(wildcard man/*.3)
DATA := data/linux-6.1-tree.tsv.xz data/linux-6.1-tinyconfig-j2.strace.xz data/README.md

install-lib: lib
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(BUILD)/libdcache.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libdcache.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libdcache.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdcache.so.$(SOVERSION)
	ln -sf libdcache.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdcache.so
	install -m 644 $(BUILD)/dcache.pc $(DESTDIR)$(LIBDIR)/pkgconfig/

install: install-lib all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)
	install -m 755 $(BUILD)/dcpath $(BUILD)/dcbench $(BUILD)/dcfs $(DESTDIR)$(BINDIR)/
	install -m 644 $(DATA) $(DESTDIR)$(DATADIR)/
	install -d $(DESTDIR)$(DATADIR)/examples
	install -m 644 examples/*.c examples/dcfs.service $(DESTDIR)$(DATADIR)/examples/
	$(if $(MAN1),install -d $(DESTDIR)$(MANDIR)/man1 && install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/)
	$(if $(MAN3),install -d $(DESTDIR)$(MANDIR)/man3 && install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/)

# Removes exactly what install and install-lib put there, and the
# directories of ours they leave empty.
uninstall:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(HEADERS)))
	rm -f $(DESTDIR)$(LIBDIR)/libdcache.a $(DESTDIR)$(LIBDIR)/libdcache.so \
	    $(DESTDIR)$(LIBDIR)/libdcache.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libdcache.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/dcache.pc
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,dcpath dcbench dcfs)
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
	    $(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3)))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/,$(notdir $(DATA)))
	rm -f $(addprefix $(DESTDIR)$(DATADIR)/examples/,$(notdir $(wildcard examples/*.c)) dcfs.service)
	-rmdir $(DESTDIR)$(DATADIR)/examples $(DESTDIR)$(DATADIR) 2>/dev/null

clean:
	rm -rf build build-asan build-tsan build-clang build-fuzz

.PHONY: all lib deps check run install install-lib uninstall clean fuzz torture kernbench
