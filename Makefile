# ramboot - boot-time initrd tooling for LTSP clients
#
#   make            host build (./ramboot)
#   make static     stripped, fully static build for the initramfs (static/ramboot)
#   make check      every test (installs missing Debian packages first)
#   make bench      loader benchmark against cp/dd/zstd/xz/lzop/gzip
#   make bench-swap compressed-swap capacity benchmark
#   make demo       build, make a demo client image, boot it in QEMU
#   make install DESTDIR= PREFIX=

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/sbin
DATADIR  ?= $(PREFIX)/share/ramboot
SYSCONFDIR ?= /etc
VERSION  := 0.1.0

CC       ?= cc
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wpointer-arith \
            -Wvla -Wformat=2 -Wcast-align -Wundef -Werror=format-security
CFLAGS   ?= -O2 -g
CPPFLAGS += -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -D_FORTIFY_SOURCE=2 \
            -DRAMBOOT_VERSION='"$(VERSION)"'
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) -pthread
LIBS     := -lzstd -llzma -llzo2 -lz -lblkid -lcrypto -lpthread
# libarchive (initrd writing/listing) is a server-side feature: the host
# build has it, the static initramfs build leaves it out.
HOST_LIBS := $(LIBS) -larchive

SRC      := $(sort $(wildcard src/*.c))
HDR      := $(wildcard src/*.h)
OBJ      := $(SRC:src/%.c=build/host/%.o)
SOBJ     := $(SRC:src/%.c=build/static/%.o)
AOBJ     := $(SRC:src/%.c=build/asan/%.o)
LIBOBJ   := $(filter-out build/asan/main.o,$(AOBJ))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/unit/%)

.DELETE_ON_ERROR:
.PHONY: all static check deps bench bench-swap demo install clean fuzz unit

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

build/host/%.o: src/%.c $(HDR) | build/host
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=1 $(ALL_CFLAGS) -c -o $@ $<

static: static/ramboot
static/ramboot: $(SOBJ) | static-dir
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(ALL_CFLAGS) -static -Wl,--gc-sections $(LDFLAGS) -o $@ $(SOBJ) $(LIBS)
	$(Q)strip $@
	@echo "static/ramboot: $$(stat -c %s $@) bytes"

build/static/%.o: src/%.c $(HDR) | build/static
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=0 $(ALL_CFLAGS) -ffunction-sections -fdata-sections -c -o $@ $<

# Sanitizer build: the unit tests link against it.
build/asan/%.o: src/%.c $(HDR) | build/asan
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=1 $(ALL_CFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -c -o $@ $<

build/unit/%: tests/unit/%.c tests/unit/tap.h $(LIBOBJ) | build/unit
	@echo "  TEST    $@"
	$(Q)$(CC) $(CPPFLAGS) -Isrc $(ALL_CFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o $@ $< $(LIBOBJ) $(HOST_LIBS)

unit: $(UNIT_BIN)

build/host build/static build/asan build/unit static-dir:
	@mkdir -p $(if $(filter static-dir,$@),static,$@)

deps:
	tests/deps.sh install

check:
	@tests/deps.sh check || tests/deps.sh install
	$(MAKE) all static unit
	tests/run-tests.sh

bench: static
	bench/load-bench.sh

bench-swap: all
	bench/swap-bench.sh

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
