#!/usr/bin/env bash
# tests/test_format.sh - every C, header and CUDA file is as .clang-format makes it (make format applies it).
# needs clang-format 14, the version the style is fitted to (Debian 12's): SKIP without it. run by make test.
set -u
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format)
if [ -z "$cf" ]; then echo "SKIP no clang-format: the style was not checked (apt-get install clang-format)"; exit 0; fi
ver=$("$cf" --version | grep -oE 'version [0-9]+' | grep -oE '[0-9]+')
if [ "$ver" != 14 ]; then echo "SKIP clang-format $ver: the style is fitted to clang-format 14"; exit 0; fi
bad=""
for f in $(make -s --no-print-directory format-files); do
    "$cf" --dry-run --Werror "$f" >/dev/null 2>&1 || bad="$bad $f"
done
if [ -z "$bad" ]; then echo "PASS every C, header and CUDA file is formatted (.clang-format, clang-format $ver)"
else echo "FAIL not formatted (make format):$bad"; fi
