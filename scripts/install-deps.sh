#!/usr/bin/env bash
# Installs the Debian packages etsim builds and tests with, and only those missing.
# Idempotent: on a machine that has everything it prints nothing and returns at once.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
set -euo pipefail

packages=(
    g++ cmake make ninja-build pkg-config
    libsystemc-dev libboost-dev
    libprotobuf-dev protobuf-compiler zlib1g-dev libssl-dev
    libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
    # MSCCL XML programs (platforms/collectives/MscclReader)
    libxml2-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    clang-format
    # the RTL co-simulation adapter (optional at configure time; `make test` runs its tests)
    verilator
    # clang and its libFuzzer runtime: `make test` runs a time-bounded fuzz of the trace reader
    clang libclang-rt-14-dev
    # ns-3 for the network co-simulation adapter (cosim/adapters/ns3); libns3-dev's CMake
    # metadata names files from the other five, so find_package(ns3) needs all of them
    libns3-dev ns3 libgsl-dev libsqlite3-dev libxml2-dev libpython3-dev
    # partitioned runs over MPI (etsim run --partitions, docs/partitioned-runs.md)
    libopenmpi-dev openmpi-bin
)
# Extra sets, asked for by name: `install-deps.sh lint` adds clang-tidy.
for extra in "$@"; do
    case "$extra" in
        fuzz) ;; # part of the base set now; the name stays valid for scripts that ask for it
        lint) packages+=(clang-tidy) ;;
        *) echo "install-deps.sh: unknown package set '$extra' (known: fuzz, lint)" >&2; exit 2 ;;
    esac
done

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

command="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
    echo "etsim needs these Debian packages: ${missing[*]}" >&2
    echo "Run as root:  $command" >&2
    exit 2
fi
echo "Installing missing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
