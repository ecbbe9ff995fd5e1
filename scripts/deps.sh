#!/usr/bin/env bash
# Installs the Debian 12 packages regionstore needs to build, test and
# benchmark, and only those that are missing. Needs root or sudo when it has
# something to install; does nothing otherwise.
# --bench also installs what only the benchmark report needs (its chart);
# --fuzz what only the fuzzers need (clang and libFuzzer); --crash-vm what
# scripts/crash-vm.sh needs (QEMU, busybox for the guest, cpio, xz); --python
# what the Python package, its tests and benchmark and the man page need.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  python3               # scripts/check-links.py and check-cmake.py (run by the tests)
  python3-jsonschema    #   and check-json-schema.py: --json documents against docs/schemas
  clang-format-14       # scripts/check-format.sh: the pinned formatter (test.sh runs it)
  clang-tidy-14         # scripts/check-function-size.sh: readability-function-size (the tests run it)
  libboost-dev          # Boost.Interprocess (header-only): the mapping
  libxxhash-dev         # XXH3 checksums
  libcli11-dev          # regionctl's command line
  nlohmann-json3-dev    # regionctl's JSON output
  catch2                # tests (v2.13)
  libbenchmark-dev      # Google Benchmark
  e2fsprogs mount       # full-disk tests: mkfs.ext4 on a loop-mounted image
  xfsprogs              # mkfs.xfs, mkfs.btrfs: the filesystem matrix
  btrfs-progs           #   (scripts/test-filesystems.sh) and the copy-on-write tests
  util-linux            # setpriv: permission tests run regionctl without capabilities
  liblmdb-dev           # the commit benchmark's peers: LMDB
  libsqlite3-dev        #   and SQLite
  librocksdb-dev        # the group-commit benchmark's peer with a group commit: RocksDB
)
for arg in "$@"; do
  case ${arg} in
    --bench) packages+=(python3-matplotlib) ;;             # bench/report.py's chart
    --fuzz) packages+=(clang-14 libfuzzer-14-dev) ;;       # the fuzz preset
    --crash-vm) packages+=(qemu-system-x86 busybox-static cpio xz-utils) ;;
    --python) packages+=(python3-dev pybind11-dev  # the extension module
                         python3-venv python3-pip python3-setuptools python3-wheel  # pip, offline
                         python3-pytest python3-numpy  # its tests
                         python3-lmdb               # its benchmark's peer (sqlite3 is built in)
                         help2man man-db) ;;        # regionctl's man page (from --help) and man
    *) echo "deps: unknown option ${arg}" >&2; exit 2 ;;
  esac
done
names=()
for entry in "${packages[@]}"; do names+=("${entry%% *}"); done

missing=()
for package in "${names[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
((${#missing[@]})) || exit 0

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
