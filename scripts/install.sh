#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/install.sh MANPAGE... - what `make install` installs. The
# Makefile runs it after the build (ramboot, static/ramboot, the man
# pages named, build/man/NAME.N), with its directories in the
# environment: DESTDIR, PREFIX, BINDIR, DATADIR, SYSCONFDIR, MANDIR,
# DRACUTDIR, SYSTEMDUNITDIR.
#
#   $BINDIR/ramboot, ramboot-netmem    the program and the memory server's
#                                      helper
#   $DATADIR/ramboot.static            the static binary for initrds
#   $MANDIR/manN/NAME.N                the man pages
#   $DRACUTDIR/90ramboot/              the dracut module
#   $SYSCONFDIR/ramboot.conf           the settings (one there is kept)
#   $DATADIR/http/*.conf               the web server examples (nginx,
#                                      lighttpd, an nginx caching proxy)
#   $SYSTEMDUNITDIR/ramboot-serve.service, ramboot-netmem*.{service,timer}
#   $SYSCONFDIR/default/ramboot-serve, ramboot-netmem  their settings
#                                      (those there are kept)
#   the boot integration               initrd-hooks/install.sh
#
# Every @BINDIR@, @DATADIR@ and @SYSCONFDIR@ in an installed file is the
# directory of this install. NO_DRACUT=1 or NO_SYSTEMD=1 leave out either
# part; NO_LTSP=1 and NO_INITRAMFS_TOOLS=1 reach initrd-hooks/install.sh.
set -eu

cd "$(dirname "$0")/.."
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr/local}
BINDIR=${BINDIR:-$PREFIX/sbin}
DATADIR=${DATADIR:-$PREFIX/share/ramboot}
SYSCONFDIR=${SYSCONFDIR:-/etc}
MANDIR=${MANDIR:-$PREFIX/share/man}
DRACUTDIR=${DRACUTDIR:-/usr/lib/dracut/modules.d}
SYSTEMDUNITDIR=${SYSTEMDUNITDIR:-$PREFIX/lib/systemd/system}

# The installed file $1 (below DESTDIR) with this install's directories.
subst() {
	sed -i -e "s|@BINDIR@|$BINDIR|g" -e "s|@DATADIR@|$DATADIR|g" \
		-e "s|@SYSCONFDIR@|$SYSCONFDIR|g" "$DESTDIR$1"
}

# Settings: install conf/$1 as $2 unless the admin's file is there.
settings() {
	if [ -e "$DESTDIR$2" ]; then
		echo "keeping $DESTDIR$2"
	else
		install -D -m 0644 "conf/$1" "$DESTDIR$2"
		subst "$2"
	fi
}

install -D -m 0755 ramboot "$DESTDIR$BINDIR/ramboot"
install -D -m 0755 sbin/ramboot-netmem "$DESTDIR$BINDIR/ramboot-netmem"
sed -i -e "s|^SETTINGS=/etc/|SETTINGS=$SYSCONFDIR/|" "$DESTDIR$BINDIR/ramboot-netmem"
install -D -m 0755 static/ramboot "$DESTDIR$DATADIR/ramboot.static"
for m in "$@"; do
	m=${m##*/}
	install -D -m 0644 "build/man/$m" "$DESTDIR$MANDIR/man${m##*.}/$m"
done

if [ "${NO_DRACUT:-}" != 1 ]; then
	d=$DRACUTDIR/90ramboot
	install -d "$DESTDIR$d"
	install -m 0755 dracut/90ramboot/module-setup.sh dracut/90ramboot/ramboot-live-*.sh \
		dracut/90ramboot/ramboot-pre-pivot.sh "$DESTDIR$d/"
	install -m 0644 dracut/90ramboot/ramboot-dracut-lib.sh "$DESTDIR$d/"
	subst "$d/module-setup.sh"
fi

settings ramboot.conf "$SYSCONFDIR/ramboot.conf"

for f in conf/http/*.conf; do
	install -D -m 0644 "$f" "$DESTDIR$DATADIR/http/${f##*/}"
	subst "$DATADIR/http/${f##*/}"
done

if [ "${NO_SYSTEMD:-}" != 1 ]; then
	for u in ramboot-serve.service ramboot-netmem.service ramboot-netmem-prune.service \
		ramboot-netmem-prune.timer; do
		install -D -m 0644 "conf/$u" "$DESTDIR$SYSTEMDUNITDIR/$u"
		subst "$SYSTEMDUNITDIR/$u"
	done
	settings ramboot-serve.default "$SYSCONFDIR/default/ramboot-serve"
	settings ramboot-netmem.default "$SYSCONFDIR/default/ramboot-netmem"
fi

if [ -f initrd-hooks/install.sh ]; then
	DESTDIR=$DESTDIR PREFIX=$PREFIX DATADIR=$DATADIR SYSCONFDIR=$SYSCONFDIR \
		sh initrd-hooks/install.sh
fi
