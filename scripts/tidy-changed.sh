#!/usr/bin/env bash
# Runs clang-tidy on the C++ files changed since BASE (the whole tree takes longer than CI
# allows on 2 cores: about 10 s of CPU per file). At most MAX files are checked, the most
# recently changed first. Usage: tidy-changed.sh BUILD_DIR [BASE] [MAX]
set -euo pipefail
build_dir=${1:?usage: tidy-changed.sh BUILD_DIR [BASE] [MAX]}
base=${2:-}
base=${base:-$(git merge-base HEAD origin/main 2>/dev/null || git rev-list --max-parents=0 HEAD | tail -n1)}
max=${3:-1000}
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
    echo "tidy: no base commit $base (a shallow or one-commit clone): nothing to compare"
    exit 0
fi
mapfile -t files < <(git diff --name-only --diff-filter=AM "$base" -- '*.cpp' | head -n "$max")
if [[ ${#files[@]} -eq 0 ]]; then
    echo "tidy: no changed .cpp files since $base"
    exit 0
fi
echo "tidy: ${#files[@]} changed file(s) since $base"
clang-tidy -p "$build_dir" --quiet "${files[@]}"
