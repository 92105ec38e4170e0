# ramboot - boot-time initrd tooling for LTSP clients
#
#   make            host build (./ramboot)
#   make static     stripped, fully static build for the initramfs (static/ramboot)
#   make check      every test (installs missing Debian packages first)
#   make bench      loader benchmark against cp/dd/zstd/xz/lzop/gzip
#   make bench-swap compressed-swap capacity benchmark
#   make bench-boot boot times by mode and link speed in QEMU (docs/benchmarks.md)
#   make bench-cache the local-disk cache against off and ram, in QEMU with
#                   the real LTSP initrd (docs/benchmarks.md)
#   make bench-lab  a lab of 1 to 8 clients: one multicast stream against
#                   unicast copies over a capped link (root; docs/benchmarks.md)
#   make bench-netmem  the network memory tier: a small client in QEMU with
#                   no swap, zram, zram + a memory server (nbd-server); the
#                   server's CPU, idle and busy (root; docs/benchmarks.md)
#   make bench-http images over HTTP on a shaped link: curl against ramboot
#                   load, then boots in QEMU (root; docs/benchmarks.md)
#   make bench-layout  an image sorted by a boot profile against the unsorted
#                   one: LTSP boots over NBD on a shaped link, deltas (root)
#   make demo       build, make a demo client image, boot it in QEMU
#   make man        the man pages (build/man/), from man/*.md and docs/
#   make check-package  build the Debian package and install it into a
#                   throwaway root (make check runs it when the tools are there)
#   make install DESTDIR= PREFIX= (SYSTEMDUNITDIR=, NO_DRACUT=1, NO_SYSTEMD=1)

PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/sbin
DATADIR  ?= $(PREFIX)/share/ramboot
SYSCONFDIR ?= /etc
MANDIR   ?= $(PREFIX)/share/man
DRACUTDIR ?= /usr/lib/dracut/modules.d
# ramboot-serve.service, ramboot-netmem.service: systemd reads units in
# /usr/local/lib/systemd/system too; the Debian package puts them in
# /lib/systemd/system. Their ExecStart is BINDIR's ramboot (ramboot-netmem
# before nbd-server), their settings SYSCONFDIR/default/ramboot-serve
# (ramboot-netmem).
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# The one place the version is written down.
VERSION  := $(shell cat VERSION)

CC       ?= cc
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wpointer-arith \
            -Wvla -Wformat=2 -Wcast-align -Wundef -Werror=format-security
# -Werror in the project's own builds (make check, demo, bench, CI), not
# forced on distribution builds with other compilers: WERROR= to drop it.
WERROR   ?=
CFLAGS   ?= -O2 -g
CPPFLAGS += -Isrc -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -D_FORTIFY_SOURCE=2 \
            -DRAMBOOT_VERSION='"$(VERSION)"'
# The checkout's directory is in no output: the debug information (and
# with it the build ID, a hash over the linked file, which strip keeps)
# names the sources relative to it, so that a build in another directory
# gives the same bytes (tests/reproducible.bats).
REPRO    := -ffile-prefix-map=$(CURDIR)=.
ALL_CFLAGS = -std=c11 $(WARN) $(WERROR) $(CFLAGS) $(REPRO) -pthread
DEPFLAGS = -MMD -MP
LIBS     := -lzstd -llzma -llzo2 -lz -lblkid -lsodium -lpthread
# libarchive (initrd writing/listing) is a server-side feature: the host
# build has it, the static initramfs build leaves it out.
HOST_LIBS := $(LIBS) -larchive
# The unit tests check SHA-256 and Ed25519 against OpenSSL's libcrypto,
# an implementation independent of ours; ramboot itself does not use it.
UNIT_LIBS := $(HOST_LIBS) -lcrypto

SRC      := $(sort $(wildcard src/*.c src/*/*.c))
OBJ      := $(SRC:src/%.c=build/host/%.o)
SOBJ     := $(SRC:src/%.c=build/static/%.o)
AOBJ     := $(SRC:src/%.c=build/asan/%.o)
LIBOBJ   := $(filter-out build/asan/main.o,$(AOBJ))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/unit/%)
# Man pages: man/NAME.N.md pulls its text out of docs/ (man/mkman.sh).
MAN_SRC  := $(sort $(wildcard man/*.md))
MAN      := $(MAN_SRC:man/%.md=build/man/%)
# The date on the pages: SOURCE_DATE_EPOCH (set by dpkg-buildpackage from
# debian/changelog), else the last commit, else today.
MAN_EPOCH = $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),$(shell date +%s))
MAN_DATE  = $(shell date -u -d @$(MAN_EPOCH) +%Y-%m-%d)

PROJECT_MAKE = $(MAKE) WERROR=-Werror

.DELETE_ON_ERROR:
.PHONY: all static check deps bench bench-swap bench-boot bench-cache bench-lab bench-netmem bench-http bench-layout demo install clean fuzz unit man check-package

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

build/host/%.o: src/%.c VERSION
	@echo "  CC      $@"
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=1 -DRAMBOOT_DELTA_WRITE=1 -DRAMBOOT_LOCALTIME=1 $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

static: static/ramboot
static/ramboot: $(SOBJ) | static-dir
	@echo "  LD      $@ (static)"
	$(Q)$(CC) $(ALL_CFLAGS) -static -Wl,--gc-sections $(LDFLAGS) -o $@ $(SOBJ) $(LIBS)
	$(Q)strip $@
	@echo "static/ramboot: $$(stat -c %s $@) bytes"

# The static binary is downloaded by every client in its initrd at every
# boot, and it must fit in 2 MiB: our code is built for size, but for the
# files whose speed a copy waits on. The decoders are the libraries' own
# (libzstd, liblzma, ...), SHA-256 and the read and write loops are in
# lib/ and codec/, the content-defined chunker in format/cdc.c and the
# lazy copier's loop in lazy/copy.c: those keep CFLAGS. The loader's
# pipeline (load/) hands buffers between them and waits on them, so it
# costs nothing measurable at -Os (make bench measures the copy's speed).
# Nor do they carry unwind tables (.eh_frame): no thread is cancelled
# in their code (pthread_cancel meets only the codec/ and bgread/
# readers, in read_full/pread_full of lib/), and C needs them for nothing else.
STATIC_OS_DIRS := boot cache dev format initrd lazy load profile publish source status swap trust udpcast
STATIC_FAST_FILES := format/cdc lazy/copy
static_opt = $(if $(filter-out $(STATIC_FAST_FILES),$(filter $(addsuffix /%,$(STATIC_OS_DIRS)),$(1))),-Os -fno-asynchronous-unwind-tables)

build/static/%.o: src/%.c VERSION
	@echo "  CC      $@"
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=0 -DRAMBOOT_DELTA_WRITE=0 -DRAMBOOT_LOCALTIME=0 -DRAMBOOT_PROFILE_SORT=0 $(ALL_CFLAGS) $(call static_opt,$*) $(DEPFLAGS) -ffunction-sections -fdata-sections -c -o $@ $<

# Sanitizer build: the unit tests link against it.
build/asan/%.o: src/%.c VERSION
	@echo "  CC      $@"
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -DHAVE_LIBARCHIVE=1 -DRAMBOOT_DELTA_WRITE=1 -DRAMBOOT_LOCALTIME=1 $(ALL_CFLAGS) $(DEPFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -c -o $@ $<

build/unit/%: tests/unit/%.c $(LIBOBJ) | build/unit
	@echo "  TEST    $@"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(DEPFLAGS) -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -o $@ $< $(LIBOBJ) $(UNIT_LIBS)

unit: $(UNIT_BIN)
# The sanitizer objects are only prerequisites of the tests: kept, not
# removed as intermediate files (which rebuilt them all on every run).
.SECONDARY: $(LIBOBJ)

# The LD_PRELOAD fault-injection shim of the tests (tests/fault/README).
build/faultinj.so: $(wildcard tests/fault/*.c tests/fault/*.h) | build/host
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -std=c11 $(WARN) $(WERROR) $(CFLAGS) -shared -fPIC -pthread -o $@ $(filter %.c,$^) -ldl

man: $(MAN)
build/man/%: man/%.md man/mkman.sh man/links.lua VERSION $(wildcard docs/*.md) | build/man
	@echo "  MAN     $@"
	$(Q)sh man/mkman.sh $< $@ $(VERSION) $(MAN_DATE)

-include $(wildcard $(foreach d,host static asan unit fuzz,build/$(d)/*.d build/$(d)/*/*.d) build/*.d)

build/host build/static build/asan build/unit build/man static-dir:
	@mkdir -p $(if $(filter static-dir,$@),static,$@)

deps:
	tests/deps.sh install

check:
	@tests/deps.sh check || tests/deps.sh install
	$(PROJECT_MAKE) all static unit man build/faultinj.so
	FAULTINJ_SO=$(CURDIR)/build/faultinj.so tests/run-tests.sh

# The Debian package alone: build it, install it into a throwaway root,
# boot an initrd built by its initramfs-tools hook and one built by its
# dracut module (tests/package.bats, tests/boot/pkg-boot.sh).
check-package:
	@tests/deps.sh check || tests/deps.sh install
	$(PROJECT_MAKE) all static man
	RAMBOOT_TESTS="bats pkgboot" BATS_FILES="tests/package.bats tests/man.bats tests/dracut.bats" tests/run-tests.sh

bench:
	$(PROJECT_MAKE) static
	bench/load-bench.sh

bench-swap:
	$(PROJECT_MAKE) all
	bench/swap-bench.sh

bench-boot:
	$(PROJECT_MAKE) all static
	bench/boot-bench.sh

bench-cache:
	$(PROJECT_MAKE) all static
	bench/cache-bench.sh

bench-lab:
	$(PROJECT_MAKE) all
	bench/lab-bench.sh

bench-netmem:
	$(PROJECT_MAKE) all static
	bench/netmem-bench.sh

bench-http:
	$(PROJECT_MAKE) all static
	bench/http-bench.sh

bench-layout:
	$(PROJECT_MAKE) all static
	bench/layout-bench.sh

demo:
	images/demo.sh

fuzz:
	fuzz/run.sh 300

# scripts/install.sh says what goes where.
install: ramboot static/ramboot $(MAN)
	$(Q)DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' BINDIR='$(BINDIR)' DATADIR='$(DATADIR)' \
	SYSCONFDIR='$(SYSCONFDIR)' MANDIR='$(MANDIR)' DRACUTDIR='$(DRACUTDIR)' \
	SYSTEMDUNITDIR='$(SYSTEMDUNITDIR)' NO_DRACUT='$(NO_DRACUT)' NO_SYSTEMD='$(NO_SYSTEMD)' \
		sh scripts/install.sh $(MAN)

clean:
	rm -rf build static ramboot

# ---- the libFuzzer targets (fuzz/run.sh builds them through these rules;
# docs/fuzzing.md). Every parser a target reaches is compiled with the
# fuzzer's coverage and the sanitizers: src/lib/ and src/format/ into one
# library (a file added there is in it by the next build), and the few
# folders above them that a target needs into one library each. The
# linker takes only the objects a target calls, with what they call.
FUZZ_CC       ?= clang
FUZZ_CPPFLAGS := -Isrc -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DHAVE_LIBARCHIVE=0 -DRAMBOOT_DELTA_WRITE=0 -DRAMBOOT_LOCALTIME=0 \
                 -DRAMBOOT_VERSION='"$(VERSION)"'
FUZZ_CFLAGS   := -std=c11 -g -O1 -fno-sanitize-recover=undefined -fno-omit-frame-pointer -pthread
FUZZ_LIB      := build/fuzz/libramboot-fuzz.a
# fuzz_objs DIRS: the objects of the sources in src/DIR/ for each DIR
fuzz_objs      = $(patsubst src/%.c,build/fuzz/%.o,$(sort $(wildcard $(1:%=src/%/*.c))))
# Each target: the folders it needs beyond lib/ and format/, its libraries.
FUZZ_TARGETS  := manifest lzop sizeexpr cmdline profile sign cindex cstate delta http dns sqfs
FUZZ_DIRS_cmdline := boot codec udpcast
FUZZ_DIRS_profile := profile bgread
FUZZ_DIRS_sign    := trust
FUZZ_DIRS_delta   := codec
FUZZ_LIBS_lzop    := -lz
FUZZ_LIBS_sign    := -lsodium
FUZZ_LIBS_delta   := -lzstd
FUZZ_LIBS_sqfs    := -lz
fuzz_dirlibs   = $(patsubst %,build/fuzz/libramboot-fuzz-%.a,$(FUZZ_DIRS_$(1)))

.PHONY: fuzz-lib fuzz-build
fuzz-lib: $(FUZZ_LIB)
fuzz-build: $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)

build/fuzz/%.o: src/%.c VERSION
	@echo "  CC      $@ (fuzz)"
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined \
		$(DEPFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(call fuzz_objs,lib format)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

# Kept between runs (made through pattern rules, else removed as
# intermediate files and rebuilt every time).
.PRECIOUS: build/fuzz/%.o build/fuzz/libramboot-fuzz-%.a
# Last in this file: the rules below expand their prerequisites twice.
.SECONDEXPANSION:
build/fuzz/libramboot-fuzz-%.a: $$(call fuzz_objs,$$*)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

build/fuzz/fuzz_%: fuzz/fuzz_%.c $$(call fuzz_dirlibs,$$*) $(FUZZ_LIB)
	@echo "  LD      $@ (fuzz)"
	$(Q)$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $(DEPFLAGS) \
		-o $@ $< -Wl,--start-group $(filter %.a,$^) -Wl,--end-group $(FUZZ_LIBS_$*)
