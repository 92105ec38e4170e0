# ramboot - boot-time initrd tooling for LTSP clients
#
#   make            host build (./ramboot)
#   make static     stripped, fully static build for the initramfs (static/ramboot)
#   make check      every test (installs missing Debian packages first)
#   make bench      loader benchmark against cp/dd/zstd/xz/lzop/gzip
#   make bench-swap compressed-swap capacity benchmark
#   make bench-boot boot times by mode and link speed in QEMU (docs/benchmarks.md)
#   make demo       build, make a demo client image, boot it in QEMU
#   make install DESTDIR= PREFIX=

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/sbin
DATADIR  ?= $(PREFIX)/share/ramboot
SYSCONFDIR ?= /etc
# The one place the version is written down.
VERSION  := $(shell cat VERSION)

CC       ?= cc
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wpointer-arith \
            -Wvla -Wformat=2 -Wcast-align -Wundef -Werror=format-security
# -Werror in the project's own builds (make check, demo, bench, CI), not
# forced on distribution builds with other compilers: WERROR= to drop it.
WERROR   ?=
CFLAGS   ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -D_FORTIFY_SOURCE=2 \
            -DRAMBOOT_VERSION='"$(VERSION)"'
ALL_CFLAGS = -std=c11 $(WARN) $(WERROR) $(CFLAGS) -pthread
DEPFLAGS = -MMD -MP
LIBS     := -lzstd -llzma -llzo2 -lz -lblkid -lcrypto -lpthread
# libarchive (initrd writing/listing) is a server-side feature: the host
# build has it, the static initramfs build leaves it out.
HOST_LIBS := $(LIBS) -larchive

SRC      := $(sort $(wildcard src/*.c))
OBJ      := $(SRC:src/%.c=build/host/%.o)
SOBJ     := $(SRC:src/%.c=build/static/%.o)
AOBJ     := $(SRC:src/%.c=build/asan/%.o)
LIBOBJ   := $(filter-out build/asan/main.o,$(AOBJ))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/unit/%)

PROJECT_MAKE = $(MAKE) WERROR=-Werror

.DELETE_ON_ERROR:
.PHONY: all static check deps bench bench-swap bench-boot demo install clean fuzz unit

all: ramboot

# V=1 shows the full commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

ramboot: $(OBJ)
	@echo "  LD      $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(HOST_LIBS)

build/host/%.o: src/%.c VERSION | build/host
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=1 $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

static: static/ramboot
static/ramboot: $(SOBJ) | static-dir
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(ALL_CFLAGS) -static -Wl,--gc-sections $(LDFLAGS) -o $@ $(SOBJ) $(LIBS)
	$(Q)strip $@
	@echo "static/ramboot: $$(stat -c %s $@) bytes"

build/static/%.o: src/%.c VERSION | build/static
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=0 $(ALL_CFLAGS) $(DEPFLAGS) -ffunction-sections -fdata-sections -c -o $@ $<

# Sanitizer build: the unit tests link against it.
build/asan/%.o: src/%.c VERSION | build/asan
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=1 $(ALL_CFLAGS) $(DEPFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -c -o $@ $<

build/unit/%: tests/unit/%.c $(LIBOBJ) | build/unit
	@echo "  TEST    $@"
	$(Q)$(CC) $(CPPFLAGS) -Isrc $(ALL_CFLAGS) $(DEPFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o $@ $< $(LIBOBJ) $(HOST_LIBS)

unit: $(UNIT_BIN)

# The LD_PRELOAD fault-injection shim of the tests (tests/fault/README).
build/faultinj.so: tests/fault/faultinj.c | build/host
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -std=c11 $(WARN) $(WERROR) $(CFLAGS) $(DEPFLAGS) -shared -fPIC -pthread -o $@ $< -ldl

-include $(wildcard build/*/*.d build/*.d)

build/host build/static build/asan build/unit static-dir:
	@mkdir -p $(if $(filter static-dir,$@),static,$@)

deps:
	tests/deps.sh install

check:
	@tests/deps.sh check || tests/deps.sh install
	$(PROJECT_MAKE) all static unit build/faultinj.so
	FAULTINJ_SO=$(CURDIR)/build/faultinj.so tests/run-tests.sh

bench:
	$(PROJECT_MAKE) static
	bench/load-bench.sh

bench-swap:
	$(PROJECT_MAKE) all
	bench/swap-bench.sh

bench-boot:
	$(PROJECT_MAKE) all static
	bench/boot-bench.sh

demo:
	images/demo.sh

fuzz:
	fuzz/run.sh 300

install: ramboot static/ramboot
	install -D -m 0755 ramboot $(DESTDIR)$(BINDIR)/ramboot
	install -D -m 0755 static/ramboot $(DESTDIR)$(DATADIR)/ramboot.static
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/ramboot.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/ramboot.conf"; \
	else install -D -m 0644 conf/ramboot.conf $(DESTDIR)$(SYSCONFDIR)/ramboot.conf; fi
	@if [ -f initrd-hooks/install.sh ]; then \
		DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' DATADIR='$(DATADIR)' SYSCONFDIR='$(SYSCONFDIR)' \
		sh initrd-hooks/install.sh; fi

clean:
	rm -rf build static ramboot
