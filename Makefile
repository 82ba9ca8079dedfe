# libdcache - plain GNU make (see docs/design.md, "Build").
#
#   make            library, tools, tests            -> build/
#   make check      deps, then every test: plain, ASan+UBSan, TSan
#   make run        deps, build, import the shipped trace, dcbench compare
#   make install PREFIX=/usr/local
#
# SAN=asan or SAN=tsan builds an instrumented tree in build-asan/ or
# build-tsan/ (the check target does that itself).

PREFIX    ?= /usr/local
SAN       ?=
CC        ?= cc
VERSION   := 0.1.0
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

URCU_CFLAGS := $(shell pkg-config --cflags liburcu-memb 2>/dev/null)
URCU_LIBS   := $(shell pkg-config --libs liburcu-memb 2>/dev/null || echo -lurcu-memb -lurcu-common)
CDS_LIBS    := $(shell pkg-config --libs liburcu-cds 2>/dev/null || echo -lurcu-cds)

CFLAGS   ?= $(OPT) -g
CFLAGS   += -std=c11 -Wall -Wextra -Wno-missing-field-initializers $(SANFLAGS) $(CFLAGS_EXTRA) $(WERROR)
CPPFLAGS += -D_GNU_SOURCE -Iinclude $(URCU_CFLAGS)
LDFLAGS  += $(SANFLAGS)
LIBS     := $(URCU_LIBS) -lpthread

LIB_SRCS := $(wildcard src/*.c)
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/obj/%.o)
LIB_PIC  := $(LIB_SRCS:src/%.c=$(BUILD)/pic/%.o)

TEST_SRCS := $(wildcard tests/test_*.c)
TESTS     := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

DCBENCH_SRCS := $(wildcard tools/dcbench/*.c)
DCBENCH_SRCS := $(filter-out tools/dcbench/import_main_test.c,$(DCBENCH_SRCS))

CORPUS_TESTS := $(BUILD)/tests/test_corpus_walk $(BUILD)/tests/test_corpus_import

FUSE_CFLAGS := $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS   := $(shell pkg-config --libs fuse3 2>/dev/null || echo -lfuse3)
DCFS_SRCS   := tools/dcfs/main.c tools/dcfs/loop.c tools/dcfs/node.c tools/dcfs/ops.c \
               tools/dcfs/coherence.c \
               tools/dcfs/uring.c

all: $(BUILD)/libdcache.a $(BUILD)/libdcache.so $(BUILD)/dcpath $(TESTS) $(CORPUS_TESTS) \
     $(BUILD)/dcfs \
     $(BUILD)/dcache.pc $(if $(wildcard tools/dcbench/main.c),$(BUILD)/dcbench)

$(BUILD)/obj/%.o: src/%.c src/internal.h include/dcache.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/pic/%.o: src/%.c src/internal.h include/dcache.h
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

$(BUILD)/dcache.pc: dcache.pc.in Makefile
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(BUILD)/dcpath: tools/dcpath/dcpath.c $(BUILD)/libdcache.a
	$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

$(BUILD)/dcbench: $(DCBENCH_SRCS) tools/dcbench/*.h $(BUILD)/libdcache.a
	$(CC) $(CPPFLAGS) -Itools/dcbench $(CFLAGS) $(DCBENCH_SRCS) -o $@ \
	    $(LDFLAGS) $(BUILD)/libdcache.a $(CDS_LIBS) $(LIBS) -llzma -lm

$(BUILD)/tests/test_import: tests/test_import.c tools/dcbench/import.c tools/dcbench/trace.c tools/dcbench/*.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itools/dcbench $(CFLAGS) $(filter %.c,$^) -o $@ $(LDFLAGS) -llzma

$(BUILD)/tests/%: tests/%.c tests/harness.h $(BUILD)/libdcache.a
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

# test_replay includes the replay engine's sources; rebuild when they change
$(BUILD)/tests/test_replay: tools/dcbench/replay.c tools/dcbench/replay.h tools/dcbench/trace.c tools/dcbench/trace.h

# Fuzz corpora replayed as plain regression tests (no libFuzzer needed).
$(BUILD)/tests/test_corpus_walk: tests/fuzz/fuzz_walk.c tests/fuzz/run_corpus.c $(BUILD)/libdcache.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DCORPUS_DIR='"tests/fuzz/corpus_walk"' $(CFLAGS) $(filter %.c,$^) \
	    -o $@ $(LDFLAGS) $(BUILD)/libdcache.a $(LIBS)

$(BUILD)/tests/test_corpus_import: tests/fuzz/fuzz_import.c tests/fuzz/run_corpus.c tools/dcbench/import.c tools/dcbench/trace.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itools/dcbench -DCORPUS_DIR='"tests/fuzz/corpus_import"' $(CFLAGS) \
	    $^ -o $@ $(LDFLAGS) -llzma

# ---- fuzzing (clang, libFuzzer): FUZZ_SECONDS per target ----------------------

FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

fuzz: deps
	@mkdir -p build-fuzz/corpus_walk build-fuzz/corpus_import
	clang -std=c11 $(CPPFLAGS) $(FUZZ_FLAGS) tests/fuzz/fuzz_walk.c $(LIB_SRCS) \
	    -o build-fuzz/fuzz_walk $(LIBS)
	clang -std=c11 $(CPPFLAGS) -Itools/dcbench $(FUZZ_FLAGS) tests/fuzz/fuzz_import.c \
	    tools/dcbench/import.c tools/dcbench/trace.c -o build-fuzz/fuzz_import -llzma
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
	$(CC) $(CPPFLAGS) $(FUSE_CFLAGS) $(CFLAGS) $(DCFS_SRCS) -o $@ \
	    $(LDFLAGS) $(BUILD)/libdcache.a $(FUSE_LIBS) $(LIBS)

# ---- kernbench: a kernel build natively and through dcfs (issue 4) ----------

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

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/dcache.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/libdcache.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libdcache.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libdcache.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libdcache.so.$(SOVERSION)
	ln -sf libdcache.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libdcache.so
	install -m 644 $(BUILD)/dcache.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 755 $(BUILD)/dcpath $(BUILD)/dcbench $(BUILD)/dcfs $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf build build-asan build-tsan build-clang build-fuzz

.PHONY: all deps check run install clean fuzz torture kernbench
