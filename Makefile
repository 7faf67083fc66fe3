# hwt top-level build.  Plain GNU make; every layer is picked up by wildcard,
# so adding a .c file to lib/, tools/, tests/unit/, bench/ or fuzz/ needs no
# edit here.
#
#   make            deps + libhwt (static, shared), build/hwt, plugin, tests, benches
#   make check      all tests, in the normal build and in an ASan+UBSan build
#   make demo       record a real program under the emulated PT unit and show its flow
#   make bench      benchmarks against the anchors (libipt, perf script, qemu)
#   make fuzz       longer fuzzing runs
#   make install    install hwt, libhwt (.a, .so), headers, hwt.pc, plugins,
#                   man pages (PREFIX=/usr/local, DESTDIR, BINDIR, LIBDIR,
#                   INCLUDEDIR, MANDIR, PLUGINDIR); make uninstall
#
# BUILD=dir selects the output folder (default build/); SAN=1 adds
# -fsanitize=address,undefined.  Several builds can coexist.

BUILD ?= build
SAN ?= 0
CC ?= cc
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

VERSION := 0.1.0
CORPUS ?= $(abspath $(CURDIR)/../shared/corpus/libipt-ptt)

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -fPIC $(WARN) -Iinclude -Ilib -DHWT_VERSION='"$(VERSION)"'
LDLIBS_LIB := -lelf -ldw -lZydis -lopencsd_c_api -lopencsd -lcapstone -lpthread
ifeq ($(SAN),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRCS := $(sort $(shell find lib -name '*.c'))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_SRCS := $(sort $(wildcard tools/*.c))
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_SRCS := $(sort $(wildcard tests/unit/*.c))
TEST_BINS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)
EMU_SRCS := $(sort $(wildcard emu/*.c))
FUZZ_SRCS := $(sort $(wildcard fuzz/*.c))
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.c=build-fuzz/fuzz/%)

LIBA := $(BUILD)/libhwt.a
LIBSO := $(BUILD)/libhwt.so
HWT := $(BUILD)/hwt
PLUGIN := $(BUILD)/hwt-pt-plugin.so
# the emulated ETM: qemu-aarch64 plugin, emu/aarch64/ + the shared stream code
ETM_PLUGIN := $(BUILD)/hwt-etm-plugin.so
ETM_EMU_SRCS := $(sort $(wildcard emu/aarch64/*.c)) emu/stream.c emu/cache_model.c

.PHONY: all build deps check demo bench fuzz clean format tests install uninstall

all: deps
	$(Q)$(MAKE) --no-print-directory build

build: $(LIBA) $(LIBSO) $(HWT) $(if $(EMU_SRCS),$(PLUGIN)) $(ETM_PLUGIN) $(TEST_BINS) $(BENCH_BINS)

deps:
	$(Q)scripts/deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIBA): $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

# The shared library exports the public API only: the functions declared in
# include/hwt/*.h (scripts/libhwt_map.sh writes the version script); the
# static library, the tools, tests and plugins keep every symbol.
$(LIBSO): $(LIB_OBJS) $(BUILD)/libhwt.map
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,$(SONAME) -Wl,--version-script=$(BUILD)/libhwt.map \
		-o $@ $(LIB_OBJS) $(LDLIBS_LIB)
	$(Q)ln -sf libhwt.so $(BUILD)/$(SONAME)

$(BUILD)/libhwt.map: $(LIB_OBJS) $(wildcard include/hwt/*.h) scripts/libhwt_map.sh
	$(Q)CC="$(CC)" scripts/libhwt_map.sh $(LIB_OBJS) >$@.tmp && mv $@.tmp $@

$(HWT): $(TOOL_OBJS) $(LIBA)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(LIBA) $(LDLIBS_LIB)

# The QEMU plugins are loaded into a qemu that is not built with
# sanitizers, so their objects (the library's included) never get
# -fsanitize: a plain build links its own objects, a SAN=1 build compiles
# its plugin objects into $(EMU_OBJ) (make check points EMU_OBJ at the
# plain build's objects, which are the same).  Only the qemu_plugin_*
# entry points are exported (emu/plugin.map).
EMU_CFLAGS := $(filter-out -fsanitize=% -fno-sanitize-recover=%,$(CFLAGS))
ifeq ($(SAN),1)
EMU_OBJ ?= $(BUILD)/obj-emu
$(EMU_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(EMU_CFLAGS) -MMD -MP -c $< -o $@
else
EMU_OBJ := $(BUILD)/obj
endif
EMU_LIB_OBJS := $(LIB_SRCS:%.c=$(EMU_OBJ)/%.o)
PLUGIN_LDFLAGS := -shared -Wl,--version-script=emu/plugin.map
$(PLUGIN): $(EMU_SRCS:%.c=$(EMU_OBJ)/%.o) $(EMU_LIB_OBJS) emu/plugin.map
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(PLUGIN_LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_LIB)

$(ETM_PLUGIN): $(ETM_EMU_SRCS:%.c=$(EMU_OBJ)/%.o) $(EMU_LIB_OBJS) emu/plugin.map
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(PLUGIN_LDFLAGS) -o $@ $(filter %.o,$^) $(LDLIBS_LIB) -lcapstone

$(BUILD)/tests/%: tests/unit/%.c $(LIBA) tests/unit/t.h
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIBA) $(LDLIBS_LIB) -lipt
# unit tests of plugin code include its .c file
$(BUILD)/tests/test_cache_model: emu/cache_model.c emu/cache_model.h

$(BUILD)/bench/%: bench/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LDLIBS_LIB) -lipt

# libFuzzer targets: clang, their own instrumented copy of the library
# (compiled once into build-fuzz/obj, linked into every target).
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -Ilib -DHWT_VERSION='"$(VERSION)"' \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=build-fuzz/obj/%.o)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
build-fuzz/libhwt-fuzz.a: $(FUZZ_LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^
build-fuzz/fuzz/%: fuzz/%.c build-fuzz/libhwt-fuzz.a
	@mkdir -p $(dir $@)
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< build-fuzz/libhwt-fuzz.a $(LDLIBS_LIB)

# ---- install ----
# make install [PREFIX=/usr/local] [DESTDIR=...] installs from $(BUILD) what
# is built there (building what is missing); PLUGINDIR is also compiled into
# lib/unit/plugin_path.c as the last place `hwt record` looks for plugins.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PLUGINDIR ?= $(LIBDIR)/hwt
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SONAME := libhwt.so.$(firstword $(subst ., ,$(VERSION)))
INSTALL ?= install

# Rebuild plugin_path.o (and relink) only when PLUGINDIR changes.
$(BUILD)/plugindir.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(PLUGINDIR)' | cmp -s - $@ || echo '$(PLUGINDIR)' >$@
$(BUILD)/obj/lib/unit/plugin_path.o: $(BUILD)/plugindir.txt
$(BUILD)/obj/lib/unit/plugin_path.o: CFLAGS += -DHWT_PLUGINDIR='"$(PLUGINDIR)"'
FORCE:

# pkg-config file: paths under PREFIX are written relative to ${prefix}.
pcdir = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
$(BUILD)/hwt.pc: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(call pcdir,$(LIBDIR))' \
		'includedir=$(call pcdir,$(INCLUDEDIR))' 'plugindir=$(call pcdir,$(PLUGINDIR))' '' \
		'Name: hwt' \
		'Description: Hardware execution tracing: Intel PT decoding, perf.data, trace units' \
		'Version: $(VERSION)' \
		'Requires.private: libelf libdw' \
		'Libs: -L$${libdir} -lhwt' \
		'Libs.private: -lZydis -lopencsd_c_api -lopencsd -lcapstone -lpthread' \
		'Cflags: -I$${includedir}' >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

install: $(HWT) $(LIBA) $(LIBSO) $(if $(EMU_SRCS),$(PLUGIN)) $(BUILD)/hwt.pc
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/hwt $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 0755 $(HWT) $(DESTDIR)$(BINDIR)/hwt
	$(INSTALL) -m 0644 $(LIBA) $(DESTDIR)$(LIBDIR)/libhwt.a
	$(INSTALL) -m 0755 $(LIBSO) $(DESTDIR)$(LIBDIR)/libhwt.so.$(VERSION)
	ln -sf libhwt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libhwt.so
	$(INSTALL) -m 0644 include/hwt/*.h $(DESTDIR)$(INCLUDEDIR)/hwt/
	$(INSTALL) -m 0644 $(BUILD)/hwt.pc $(DESTDIR)$(PKGCONFIGDIR)/hwt.pc
	for p in $(BUILD)/hwt-*-plugin.so; do \
		[ ! -e "$$p" ] || $(INSTALL) -m 0755 "$$p" $(DESTDIR)$(PLUGINDIR)/ || exit 1; done
	$(INSTALL) -m 0644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then \
		ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/hwt $(DESTDIR)$(LIBDIR)/libhwt.a \
		$(DESTDIR)$(LIBDIR)/libhwt.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
		$(DESTDIR)$(LIBDIR)/libhwt.so $(DESTDIR)$(PKGCONFIGDIR)/hwt.pc \
		$(DESTDIR)$(PLUGINDIR)/hwt-*-plugin.so \
		$(addprefix $(DESTDIR)$(INCLUDEDIR)/hwt/,$(notdir $(wildcard include/hwt/*.h))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(wildcard man/*.1)))
	rmdir $(DESTDIR)$(INCLUDEDIR)/hwt $(DESTDIR)$(PLUGINDIR) 2>/dev/null || true

tests: build

# make check builds with one job per CPU unless make was given -j.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PAR := $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

check: deps
	$(Q)$(MAKE) --no-print-directory $(PAR) build BUILD=build
	$(Q)$(MAKE) --no-print-directory $(PAR) build BUILD=build-asan SAN=1 EMU_OBJ=build/obj
	$(Q)$(MAKE) --no-print-directory $(PAR) $(FUZZ_BINS)
	$(Q)CORPUS=$(CORPUS) scripts/check.sh build build-asan build-fuzz

demo: all
	$(Q)scripts/demo.sh $(BUILD)

bench: deps
	$(Q)$(MAKE) --no-print-directory build BUILD=build
	$(Q)CORPUS=$(CORPUS) scripts/bench.sh build

fuzz: deps
	$(Q)$(MAKE) --no-print-directory $(PAR) $(FUZZ_BINS)
	$(Q)FUZZ_SECONDS=$${FUZZ_SECONDS:-300} scripts/fuzz.sh build-fuzz

format:
	clang-format -i $$(find include lib tools emu tests bench fuzz examples -name '*.[ch]')

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD)/obj $(BUILD)/obj-emu build-fuzz/obj -name '*.d' 2>/dev/null)
