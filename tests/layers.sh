#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/layers.sh [TOP] - check src/ against the layer rule of
# docs/ARCHITECTURE.md, whose table of folders and ranks is the rule:
#   - a file includes headers of its own folder and of lower ranks only;
#   - every folder of src/ is in the table, and every folder of the table
#     is in src/;
#   - src/cmd.h is included by main.c and by the files that define a
#     sub-command, and no sub-command is called outside main.c (one
#     subsystem reaches another through structs and functions, not argv);
#   - every header compiles on its own;
#   - at link time too: each source is compiled, and every symbol its
#     object takes from another folder's object (nm) is defined in a
#     folder of lower rank, so that a declaration written by hand, or one
#     put in a header of the wrong folder, cannot hide a call upwards.
#     LINK=0 leaves this check out (the tests of the other checks).
# Prints one line per breach and exits 1; exits 0 when the tree keeps the
# rule. With EDGES=1 it also prints the include edges between folders
# ("boot -> lib 8": eight #include lines).
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
doc=$top/docs/ARCHITECTURE.md
src=$top/src
bad=0

[ -r "$doc" ] || { echo "layers: $doc: missing"; exit 1; }

# "| `lib/` | 0 | ..." -> "lib 0"
# shellcheck disable=SC2016 # the backquotes are the table's
ranks=$(sed -n 's/^| `\([a-z0-9_]*\)\/` | \([0-9][0-9]*\) |.*/\1 \2/p' "$doc")
[ -n "$ranks" ] || { echo "layers: no rank table in $doc"; exit 1; }

rank_of() {
	printf '%s\n' "$ranks" | awk -v d="$1" '$1 == d { print $2; exit }'
}

for d in "$src"/*/; do
	d=${d%/}; d=${d##*/}
	if [ -z "$(rank_of "$d")" ]; then
		echo "src/$d/: not in the table of docs/ARCHITECTURE.md"
		bad=1
	fi
done
for d in $(printf '%s\n' "$ranks" | awk '{ print $1 }'); do
	if [ ! -d "$src/$d" ]; then
		echo "docs/ARCHITECTURE.md: $d/ is in the table but not in src/"
		bad=1
	fi
done

# Files directly in src/ (main.c, cmd.h) are above every folder.
top_rank=$(printf '%s\n' "$ranks" | awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m + 1 }')

edges=$(mktemp)
objs=$(mktemp -d)
trap 'rm -rf "$edges" "$objs"' EXIT
for f in "$src"/*.[ch] "$src"/*/*.[ch]; do
	[ -e "$f" ] || continue
	rel=${f#"$src"/}
	case $rel in
	*/*) from=${rel%%/*}; fr=$(rank_of "$from") ;;
	*) from=main; fr=$top_rank ;;
	esac
	[ -n "$fr" ] || continue
	# shellcheck disable=SC2013 # names without spaces
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		cmd.h)
			if [ "$rel" != main.c ] && [ "$rel" != cmd.h ] &&
			   ! grep -q '^int cmd_[a-z_]*(int argc, char \*\*argv)' "$f"; then
				echo "src/$rel: includes cmd.h but defines no sub-command"
				bad=1
			fi
			continue ;;
		*/*) to=${inc%%/*} ;;
		*)
			echo "src/$rel: includes \"$inc\": name the folder (\"lib/$inc\", ...)"
			bad=1
			continue ;;
		esac
		tr=$(rank_of "$to")
		if [ -z "$tr" ]; then
			echo "src/$rel: includes \"$inc\" from a folder not in the table"
			bad=1
			continue
		fi
		[ "$to" = "$from" ] && continue
		echo "$from $to" >>"$edges"
		if [ "$tr" -ge "$fr" ]; then
			echo "src/$rel: includes \"$inc\": $to/ (rank $tr) is not below $from/ (rank $fr)"
			bad=1
		fi
	done
done

# The sub-commands of cmd.h are called by main.c only.
# shellcheck disable=SC2013 # names without spaces
for c in $(sed -n 's/^int \(cmd_[a-z_]*\)(int argc, char \*\*argv);.*/\1/p' "$src/cmd.h"); do
	for f in "$src"/*/*.c; do
		[ -e "$f" ] || continue
		grep -n "\\b$c(" "$f" | grep -v "^[0-9]*:int $c(int argc, char \*\*argv)" |
		while IFS=: read -r n _; do
			echo "src/${f#"$src"/}:$n: calls $c(): only main.c runs sub-commands"
		done | grep . && bad=1
	done
done

# Every header compiles on its own: it includes what it uses, so that a
# file may include it first, alone, in any order.
cc=${CC:-cc}
if command -v "$cc" >/dev/null 2>&1; then
	for h in "$src"/*.h "$src"/*/*.h; do
		[ -e "$h" ] || continue
		rel=${h#"$src"/}
		if ! out=$(printf '#include "%s"\n' "$rel" |
			"$cc" -std=c11 -fsyntax-only -Wall -Wextra -Werror -I"$src" -D_GNU_SOURCE \
				-D_FILE_OFFSET_BITS=64 -x c - 2>&1); then
			echo "src/$rel: does not compile on its own: $(printf '%s\n' "$out" |
				grep -m1 'error')"
			bad=1
		fi
	done
fi

# Calls at link time: "D name obj" for what each object defines, "U name
# obj" for what it takes from elsewhere; a symbol that no object of src/
# defines is the C library's or another library's. -O0: a call in code
# the optimiser would drop is a call all the same.
if [ "${LINK:-1}" != 0 ] && command -v "$cc" >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
	for f in "$src"/*.c "$src"/*/*.c; do
		[ -e "$f" ] || continue
		rel=${f#"$src"/}
		mkdir -p "$objs/$(dirname "$rel")"
		if ! out=$("$cc" -std=c11 -O0 -w -c -I"$src" -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
			-DHAVE_LIBARCHIVE=1 -DRAMBOOT_DELTA_WRITE=1 -DRAMBOOT_VERSION='"0"' \
			-o "$objs/${rel%.c}.o" "$f" 2>&1); then
			echo "src/$rel: does not compile: $(printf '%s\n' "$out" | grep -m1 'error')"
			bad=1
		fi
	done
	calls=$(cd "$objs" && for o in *.o */*.o; do
		[ -e "$o" ] || continue
		nm -P -g --defined-only "$o" | awk -v o="$o" '{ print "D", $1, o }'
		nm -P -u "$o" | awk -v o="$o" '{ print "U", $1, o }'
	done | awk -v ranks="$ranks" -v top="$top_rank" '
		function folder(o) { return o ~ /\// ? substr(o, 1, index(o, "/") - 1) : "main" }
		BEGIN {
			n = split(ranks, r, "\n")
			for (i = 1; i <= n; i++) { split(r[i], f, " "); rank[f[1]] = f[2] }
			rank["main"] = top
		}
		$1 == "D" && !($2 in def) { def[$2] = $3 }
		$1 == "U" { use[++u] = $2 " " $3 }
		END {
			for (i = 1; i <= u; i++) {
				split(use[i], x, " ")
				if (!(x[1] in def))
					continue
				from = folder(x[2]); to = folder(def[x[1]])
				if (from == to || rank[to] < rank[from])
					continue
				sub(/\.o$/, ".c", x[2]); d = def[x[1]]; sub(/\.o$/, ".c", d)
				printf "src/%s: uses %s() of src/%s: %s/ (rank %d) is not below %s/ (rank %d)\n",
					x[2], x[1], d, to, rank[to], from, rank[from]
			}
		}' | sort)
	if [ -n "$calls" ]; then
		printf '%s\n' "$calls"
		bad=1
	fi
fi

if [ "${EDGES:-0}" = 1 ]; then
	sort "$edges" | uniq -c | awk '{ print $2 " -> " $3 " " $1 }'
fi
exit $bad
