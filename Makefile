# libdcache - plain GNU make (see docs/design.md, "Build").
#
#   make              library and tools (dcpath, dcfs, dcbench) -> build/
#   make tests        those, the test programs and the examples
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
# one version, the header's; the soname's number is raised whenever a
# program built against an older header could break (dcache.h, Version)
VERSION   := $(shell sed -n 's/^\#define DC_VERSION_STRING[^"]*"\(.*\)"/\1/p' include/dcache.h)
SOVERSION := 1

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
# The NFS backend (tools/nfs) is built only where libnfs is: without it
# dcpath says so of an nfs:// root.  Asked once, when this file is read.
HAVE_NFS := $(shell $(PKG_CONFIG) --exists libnfs 2>/dev/null && echo y)
ifeq ($(HAVE_NFS),y)
NFS_CFLAGS := $(shell $(PKG_CONFIG) --cflags libnfs) -DDC_HAVE_NFS
NFS_LIBS   := $(shell $(PKG_CONFIG) --libs libnfs)
DCNFS_LIB  := $(BUILD)/libdcnfs.a
endif

CFLAGS   ?= $(OPT) -g
CFLAGS   += -std=c11 -Wall -Wextra -Wno-missing-field-initializers $(SANFLAGS) $(CFLAGS_EXTRA) $(WERROR)
CPPFLAGS += -D_GNU_SOURCE -Iinclude $(URCU_CFLAGS)
LDFLAGS  += $(SANFLAGS)
LIBS      = $(URCU_LIBS) -lpthread
# every object also writes its header dependencies (.d), read back below
DEPFLAGS := -MMD -MP
OBJ      := $(BUILD)/obj

# ---- what is built from what ----------------------------------------------------
#
#   src/             libdcache (.a, and .so from position-independent objects)
#   tools/common/    what the tools share          -> libdctools.a
#   tools/dcbench/   dcbench: main.c, and its commands by concept in folders
#                    -> libdcbench.a, which the tests link too
#   tests/torture/   the torture and memstorm engines: test programs, and
#                    dcbench's torture and memstorm commands
#   tools/dcfs/      dcfs (FUSE)        tools/dcpath/    dcpath
#   tools/nfs/       the NFS backend (libnfs) -> libdcnfs.a, when libnfs is there
#   tools/netdelay/  a relay adding a LAN's latency (NFS benchmarks)  -> netdelay
#   tests/           one program per tests/test_*.c, the fuzz corpora replayed

LIB_SRCS     := $(wildcard src/*.c)
COMMON_SRCS  := $(wildcard tools/common/*.c)
DCBENCH_SRCS := $(sort $(shell find tools/dcbench -name '*.c'))
ENGINE_SRCS  := $(wildcard tests/torture/*.c)
# dcfs over NFS (remote*.c) only where libnfs is
DCFS_SRCS    := $(filter-out $(if $(HAVE_NFS),,tools/dcfs/remote%.c),$(wildcard tools/dcfs/*.c))
NFS_SRCS     := $(wildcard tools/nfs/*.c)
TEST_SRCS    := $(wildcard tests/test_*.c)
EXAMPLE_SRCS := $(wildcard examples/*.c)

objs = $(patsubst %.c,$(OBJ)/%.o,$(1))
LIB_OBJS     := $(call objs,$(LIB_SRCS))
LIB_PIC      := $(patsubst %.c,$(BUILD)/pic/%.o,$(LIB_SRCS))
COMMON_OBJS  := $(call objs,$(COMMON_SRCS))
DCBENCH_OBJS := $(call objs,$(filter-out tools/dcbench/main.c,$(DCBENCH_SRCS)) $(ENGINE_SRCS))
DCFS_OBJS    := $(call objs,$(DCFS_SRCS))
TESTS        := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
CORPUS_TESTS := $(BUILD)/tests/test_corpus_walk $(BUILD)/tests/test_corpus_import
EXAMPLES     := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)

# what users get; `tests` adds the test programs and the examples
all: lib $(BUILD)/dcpath $(BUILD)/dcfs $(BUILD)/dcbench $(BUILD)/netdelay

tests: all $(TESTS) $(CORPUS_TESTS) $(EXAMPLES)

lib: $(BUILD)/libdcache.a $(BUILD)/libdcache.so $(BUILD)/dcache.pc

HEADERS := include/dcache.h include/dcache-debug.h

# ---- objects: one rule per kind, each with its header dependencies ----------------

# The library hides all but its dc_* names.
$(OBJ)/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/pic/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(OBJ)/tools/nfs/%.o: tools/nfs/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(NFS_CFLAGS) -Itools $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OBJ)/tools/dcpath/dcpath.o: tools/dcpath/dcpath.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(NFS_CFLAGS) -Itools $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OBJ)/tools/dcfs/%.o: tools/dcfs/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FUSE_CFLAGS) $(SECCOMP_CFLAGS) $(NFS_CFLAGS) -Itools $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# dcfs's node table alone, with its race window staged and small unmount
# batches, for tests/test_node
$(OBJ)/tests/node-race.o: tools/dcfs/node.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FUSE_CFLAGS) -DNODE_RACE_WINDOW -DNODE_DROP_BATCH=2 -Itools $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(OBJ)/tests/test_node.o: tests/test_node.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(FUSE_CFLAGS) -Itests -Itools/dcfs $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# the library again with its race windows open, for tests/test_race
$(OBJ)/race/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -DDC_RACE_WINDOWS -fvisibility=hidden -c $< -o $@

# The fuzz corpora's runner, once per corpus.
$(OBJ)/tests/fuzz/run_corpus_%.o: tests/fuzz/run_corpus.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DCORPUS_DIR='"tests/fuzz/corpus_$*"' $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# the examples, as a user compiles them
$(OBJ)/examples/%.o: examples/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# everything else: the tools, the engines, the tests
$(OBJ)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itools -Itools/dcbench -Itests $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# ---- libraries and programs ------------------------------------------------------

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

$(BUILD)/libdctools.a: $(COMMON_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libdcbench.a: $(DCBENCH_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libdcnfs.a: $(call objs,$(NFS_SRCS))
	rm -f $@
	ar rcs $@ $^

# dcache.pc names where install puts things: remade whenever they change
# (the stamp is rewritten only when its text differs).
DIRS_NOW := $(PREFIX) $(LIBDIR) $(INCLUDEDIR)
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(BUILD)/install-dirs 2>/dev/null)" = "$(DIRS_NOW)" ] || echo "$(DIRS_NOW)" > $(BUILD)/install-dirs; })

$(BUILD)/dcache.pc: dcache.pc.in $(BUILD)/install-dirs include/dcache.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

TOOL_LIBS = $(BUILD)/libdctools.a $(BUILD)/libdcache.a

$(BUILD)/dcpath: $(OBJ)/tools/dcpath/dcpath.o $(DCNFS_LIB) $(TOOL_LIBS)
	$(CC) $(LDFLAGS) $^ -o $@ $(NFS_LIBS) $(LIBS)

$(BUILD)/dcbench: $(OBJ)/tools/dcbench/main.o $(BUILD)/libdcbench.a $(TOOL_LIBS)
	$(CC) $(LDFLAGS) $^ -o $@ $(CDS_LIBS) $(LIBS) $(LZMA_LIBS) -lm

# a TCP relay that adds a LAN's latency, for the NFS benchmarks (bench/fsmeta.sh)
$(BUILD)/netdelay: $(OBJ)/tools/netdelay/netdelay.o
	$(CC) $(LDFLAGS) $^ -o $@ -lpthread

$(BUILD)/dcfs: $(DCFS_OBJS) $(DCNFS_LIB) $(TOOL_LIBS)
	$(CC) $(LDFLAGS) $^ -o $@ $(FUSE_LIBS) $(SECCOMP_LIBS) $(NFS_LIBS) $(LIBS)

# A test links what it uses of dcbench's objects, the tools' and the library.
$(BUILD)/tests/%: $(OBJ)/tests/%.o $(BUILD)/libdcbench.a $(TOOL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(CDS_LIBS) $(LIBS) $(LZMA_LIBS) -lm

# nfs4.c built into the test itself, to reach its reply reader
$(OBJ)/tests/test_nfs4_reply.o: CPPFLAGS += $(NFS_CFLAGS)
$(BUILD)/tests/test_nfs4_reply: $(OBJ)/tests/test_nfs4_reply.o $(DCNFS_LIB) $(TOOL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(NFS_LIBS) $(LIBS)

# every malloc, calloc, realloc and strdup of the importer's code can be failed
$(BUILD)/tests/test_import_oom: LDFLAGS += -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc -Wl,--wrap=strdup

$(BUILD)/tests/test_node: $(OBJ)/tests/test_node.o $(OBJ)/tests/node-race.o $(OBJ)/tools/dcfs/nodefd.o \
			  $(TOOL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(LIBS)

$(BUILD)/libdcache-race.a: $(patsubst %.c,$(OBJ)/race/%.o,$(LIB_SRCS))
	rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/test_race: $(OBJ)/tests/test_race.o $(BUILD)/libdcbench.a $(BUILD)/libdctools.a \
			  $(BUILD)/libdcache-race.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(CDS_LIBS) $(LIBS) $(LZMA_LIBS) -lm

# Fuzz corpora replayed as plain regression tests (no libFuzzer needed).
$(BUILD)/tests/test_corpus_%: $(OBJ)/tests/fuzz/fuzz_%.o $(OBJ)/tests/fuzz/run_corpus_%.o \
			      $(BUILD)/libdcbench.a $(TOOL_LIBS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(CDS_LIBS) $(LIBS) $(LZMA_LIBS) -lm

# The examples, as a user builds them (tests/test_install.sh builds them
# again against the installed library).
$(BUILD)/examples/%: $(OBJ)/examples/%.o $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ -o $@ $(LIBS)

# objects made by pattern chains are kept: the next build needs them (not
# .SECONDARY, which would let a missing source pass unnoticed)
.PRECIOUS: $(OBJ)/%.o

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- fuzzing (clang, libFuzzer): FUZZ_SECONDS per target ----------------------

FUZZ_SECONDS ?= 60
# the importer alone: the format, the strace parser, the process state
FUZZ_IMPORT_SRCS := $(addprefix tools/dcbench/trace/,trace.c validate.c dump.c util.c \
		    strace.c strtab.c proc.c syscalls.c import.c) tools/common/logreader.c
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

FUZZERS := build-fuzz/fuzz_walk build-fuzz/fuzz_import

# the fuzzers are built by a second make, after deps (see "the README's
# commands" below); `make -n fuzzers` fails when a source they list is gone
fuzz: deps
	@$(MAKE) --no-print-directory fuzzers
	cd build-fuzz && ./fuzz_walk -max_total_time=$(FUZZ_SECONDS) -dict=../tests/fuzz/walk.dict \
	    corpus_walk ../tests/fuzz/corpus_walk
	cd build-fuzz && ./fuzz_import -max_total_time=$(FUZZ_SECONDS) \
	    corpus_import ../tests/fuzz/corpus_import

fuzzers: $(FUZZERS)

build-fuzz/fuzz_walk: tests/fuzz/fuzz_walk.c $(LIB_SRCS) $(wildcard src/*.h) $(HEADERS)
	@mkdir -p build-fuzz/corpus_walk
	clang -std=c11 $(CPPFLAGS) $(FUZZ_FLAGS) tests/fuzz/fuzz_walk.c $(LIB_SRCS) -o $@ $(LIBS)

build-fuzz/fuzz_import: tests/fuzz/fuzz_import.c $(FUZZ_IMPORT_SRCS) \
			 $(wildcard tools/dcbench/trace/*.h tools/common/*.h)
	@mkdir -p build-fuzz/corpus_import
	clang -std=c11 $(CPPFLAGS) -Itools -Itools/dcbench $(FUZZ_FLAGS) \
	    tests/fuzz/fuzz_import.c $(FUZZ_IMPORT_SRCS) -o $@ $(LZMA_LIBS)

# ---- the long torture: TORTURE_SECONDS per mode (default 10 minutes) -----------

TORTURE_SECONDS ?= 600
torture: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/dcbench torture --seconds $(TORTURE_SECONDS) --mode all

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

.PHONY: all tests fuzzers lib deps check run install install-lib uninstall clean fuzz torture kernbench
