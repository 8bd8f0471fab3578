#!/usr/bin/env bash
# Runs clang-tidy on the C++ files changed since BASE (the whole tree takes longer than
# CI allows on 2 cores). Usage: tidy-changed.sh BUILD_DIR [BASE]
set -euo pipefail
build_dir=${1:?usage: tidy-changed.sh BUILD_DIR [BASE]}
base=${2:-$(git merge-base HEAD origin/main 2>/dev/null || git rev-list --max-parents=0 HEAD | tail -n1)}
mapfile -t files < <(git diff --name-only --diff-filter=AM "$base" -- '*.cpp')
if [[ ${#files[@]} -eq 0 ]]; then
    echo "tidy: no changed .cpp files since $base"
    exit 0
fi
clang-tidy -p "$build_dir" --quiet "${files[@]}"
