#!/usr/bin/env bash
# Installs the Debian 12 packages liftx needs (as root, or through sudo) and configures and builds
# liftx into build/ (Release, no debug information). Safe to run again: installed packages are
# skipped. LIFTX_BUILD_DIR, LIFTX_CMAKE_ARGS: another build folder and configuration;
# LIFTX_BUILD_TYPE: another CMake build type (RelWithDebInfo to debug); LIFTX_EXTRA_PACKAGES: more
# packages (scripts/fuzz.sh: clang); LIFTX_BUILD_TARGETS: build only these targets.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config
  libfmt-dev doctest-dev libcli11-dev nlohmann-json3-dev libeigen3-dev libboost-dev
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libclblast-dev libsqlite3-dev libxgboost-dev libjemalloc-dev clang-format
  libopenmpi-dev openmpi-bin sqlite3
  ${LIFTX_EXTRA_PACKAGES:-}
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "liftx setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

build_dir=${LIFTX_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${LIFTX_BUILD_TYPE:-Release}" ${LIFTX_CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)" ${LIFTX_BUILD_TARGETS:+--target $LIFTX_BUILD_TARGETS}
