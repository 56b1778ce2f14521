#!/usr/bin/env bash
# tests/test_install.sh - make install with PREFIX and DESTDIR as a packager runs it: the program, the header,
# the CUDA file, the man page (from the program's --help) and the pkg-config file land where they should and
# work from there; make uninstall takes them away. needs ./dpprof (make). run by make test.
set -u
cd "$(dirname "$0")/.."
. tests/lib.bash

stage=$tmp/stage
out=$(make --no-print-directory install DESTDIR="$stage" PREFIX=/usr 2>&1); rc=$?
check "make install DESTDIR=... PREFIX=/usr exits 0" test "$rc" = 0
for f in usr/bin/dpprof usr/include/dpprof.h usr/share/dpprof/dpprof_kernels.cu usr/share/man/man1/dpprof.1 usr/lib/pkgconfig/dpprof.pc; do
    check "installed: /$f" test -s "$stage/$f"
done
check "nothing is installed outside DESTDIR/usr" bash -c "[ -z \"\$(find '$stage' -mindepth 1 -maxdepth 1 ! -name usr)\" ]"
check "the installed program runs ($("$stage/usr/bin/dpprof" version 2>&1))" bash -c "'$stage/usr/bin/dpprof' version | grep -q '^dpprof [0-9]'"
check "the installed header is the repository's" cmp -s dpprof.h "$stage/usr/include/dpprof.h"
check "bin/dpprof is executable, the header and man page are not" bash -c "[ -x '$stage/usr/bin/dpprof' ] && [ ! -x '$stage/usr/include/dpprof.h' ] && [ ! -x '$stage/usr/share/man/man1/dpprof.1' ]"
man1=$stage/usr/share/man/man1/dpprof.1
check "the man page: a .TH header, NAME and SYNOPSIS, and a section for each command" \
    bash -c "head -1 '$man1' | grep -q '^\.TH DPPROF 1 ' && grep -q '^\.SH NAME' '$man1' && grep -q '^\.SH SYNOPSIS' '$man1' &&
             for c in RUN SWEEP REPORT PLOT EPSILON ATTNBENCH; do grep -q \"^\\.SH \\\"DPPROF \$c\\\"\" '$man1' || exit 1; done"
missing=""
for opt in $(./dpprof run --help | grep -oE '^  --[a-z0-9-]+' | sort -u); do grep -qF -- "$opt" "$man1" || missing="$missing $opt"; done
check "the man page has every option of run --help${missing:+ (missing:$missing)}" test -z "$missing"
if command -v man >/dev/null; then
    check "man renders it without a warning" bash -c "[ -n \"\$(MANWIDTH=100 man -l '$man1' 2>'$tmp/man.err' | grep -- '--memory-limit')\" ] && [ ! -s '$tmp/man.err' ]"
fi
pc=$stage/usr/lib/pkgconfig/dpprof.pc
check "dpprof.pc names the prefix, the version and -lm" bash -c "grep -qx 'prefix=/usr' '$pc' && grep -qx 'includedir=/usr/include' '$pc' && grep -qx \"Version: \$(./dpprof version | cut -d' ' -f2)\" '$pc' && grep -qx 'Libs: -lm' '$pc'"
if command -v pkg-config >/dev/null; then
    libs=$(PKG_CONFIG_PATH=$stage/usr/lib/pkgconfig pkg-config --libs dpprof 2>&1); ver=$(PKG_CONFIG_PATH=$stage/usr/lib/pkgconfig pkg-config --modversion dpprof 2>&1)
    check "pkg-config reads it (version $ver, libs $libs)" test "$(echo $libs)" = -lm -a "$ver" = "$(./dpprof version | cut -d' ' -f2)"
fi
# the profiler from the installed header, as a user's program builds it
cat >"$tmp/embed.c" <<'C'
#define DPPROF_IMPLEMENTATION
#include <dpprof.h>
#include <stdio.h>
int main(void) {
    dpprof_prof p;
    float *x;
    dpprof_prof_init(&p, 0);
    dpprof_phase_begin(&p, DPPROF_PHASE_FORWARD, 0);
    x = (float *)dpprof_malloc(&p, 4096, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP);
    dpprof_free(&p, x);
    printf("%lld\n", (long long)p.peak_bytes);
    dpprof_prof_free(&p);
    return 0;
}
C
check "the profiler alone, on the installed header with no define or library, builds as C11 and C++17 and runs" \
    bash -c "gcc -std=c11 -Wall -Wextra -Werror -pedantic -I'$stage/usr/include' '$tmp/embed.c' -o '$tmp/embed' && [ \"\$('$tmp/embed')\" = 4096 ] &&
             g++ -std=c++17 -Wall -Wextra -Werror -I'$stage/usr/include' -x c++ '$tmp/embed.c' -o '$tmp/embed++' && [ \"\$('$tmp/embed++')\" = 4096 ]"
make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr >/dev/null 2>&1
check "make uninstall removes every file it installed" bash -c "[ -z \"\$(find '$stage' -type f)\" ]"
