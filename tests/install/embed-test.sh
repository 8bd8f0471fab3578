#!/usr/bin/env bash
# Installs etsim into a temporary prefix, builds examples/embed against it with
# find_package(etsim), runs it and checks what it prints. Usage: embed-test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/etsim-embed-XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir/examples/embed" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
output=$(SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$work/build/embed_example")
expected=$'paused at 250 ns (time-reached)\nfinished at 1 us (all-idle)'
if [[ "$output" != "$expected" ]]; then
    echo "embed example printed:"; echo "$output"
    echo "expected:"; echo "$expected"
    exit 1
fi
# The installed tree carries the etsim command and the package version file too.
test -x "$work/prefix/bin/etsim"
grep -q 'set(PACKAGE_VERSION "0.1.0")' "$work/prefix/lib/cmake/etsim/etsimConfigVersion.cmake"
echo "embedded etsim from an installed tree: OK"
