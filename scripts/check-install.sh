#!/usr/bin/env bash
# Installs a built tree into a scratch prefix, then builds and runs the
# consumer examples against it: the C++ one with CMake's find_package and with
# pkg-config and a plain compiler line, the C one (examples/c-consumer, a
# project that enables only C) the same two ways.
# Usage: scripts/check-install.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:?usage: check-install.sh BUILD_DIR}
prefix="${build}/install-check/prefix"
rm -rf "${build}/install-check"
cmake --install "${build}" --prefix "${build}/install-check/staging" >/dev/null
# Move the tree after installing: both consumers must find it where it is now.
mv "${build}/install-check/staging" "${prefix}"
prefix=$(cd "${prefix}" && pwd)
libdir=$(dirname "$(find "${prefix}" -name 'libregionstore.so' | head -n 1)")
echo "installed into ${prefix}:"
(cd "${prefix}" && find . -type f -o -type l | sort | sed 's/^/  /')

# Only the regionstore namespace and the C API's rs_ functions may be
# exported from the shared library.
leaked=$(nm -DC --defined-only "${libdir}/libregionstore.so" | awk '{ $1 = ""; $2 = ""; print }' |
         sed 's/^ *//' | grep -v -E '^(regionstore::|typeinfo for regionstore::|typeinfo name for regionstore::|vtable for regionstore::)' |
         grep -v -E '^(REGIONSTORE|_init|_fini|rs_[a-z_]+$)' || true)
if [[ -n ${leaked} ]]; then
  echo "libregionstore.so exports symbols outside regionstore:: and rs_*" >&2
  echo "${leaked}" >&2
  exit 1
fi
echo "exported: $(nm -DC --defined-only "${libdir}/libregionstore.so" | grep -c 'regionstore::') symbols in regionstore::, $(nm -D --defined-only "${libdir}/libregionstore.so" | grep -c ' rs_') C functions rs_*, nothing else"
# The test hooks (lib/test_hooks.h) exist only in the regionstore_testing
# library: no symbol of theirs, exported or local, is in the shared one.
hook_pattern='SetMutation|CurrentMutation|MarkCommitPhase|SetCommitPhaseWord|with_test_hooks'
hooks=$( { nm -C "${libdir}/libregionstore.so" 2>/dev/null || nm -DC "${libdir}/libregionstore.so"; } |
        grep -E "${hook_pattern}" || true)
if [[ -n ${hooks} ]]; then
  echo "libregionstore.so carries test hooks:" >&2
  echo "${hooks}" >&2
  exit 1
fi
echo "test hooks: none in libregionstore.so"

echo "consumer via find_package(regionstore CONFIG):"
cmake -S examples/consumer -B "${build}/install-check/cmake" \
  -DCMAKE_PREFIX_PATH="${prefix}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "${build}/install-check/cmake" >/dev/null
"${build}/install-check/cmake/consumer" "${build}/install-check/cmake.rgn"

# A build with REGIONSTORE_BUILD_STATIC=ON installs libregionstore.a: the
# same consumer links it, and runs with no libregionstore.so to load.
if grep -q '^REGIONSTORE_BUILD_STATIC:BOOL=ON$' "${build}/CMakeCache.txt"; then
  echo "consumer via find_package, static (regionstore::regionstore_static):"
  cmake -S examples/consumer -B "${build}/install-check/static" -DCONSUMER_STATIC=ON \
    -DCMAKE_PREFIX_PATH="${prefix}" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "${build}/install-check/static" >/dev/null
  if ldd "${build}/install-check/static/consumer" | grep -q libregionstore; then
    echo "the static consumer loads a shared libregionstore" >&2
    exit 1
  fi
  "${build}/install-check/static/consumer" "${build}/install-check/static.rgn"
fi

echo "consumer via pkg-config:"
export PKG_CONFIG_PATH="${libdir}/pkgconfig"
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
c++ -std=c++20 -O2 examples/consumer/main.cc -o "${build}/install-check/pkgconfig-consumer" \
  $(pkg-config --cflags --libs regionstore) -Wl,-rpath,"${libdir}"
"${build}/install-check/pkgconfig-consumer" "${build}/install-check/pkgconfig.rgn"
echo "C consumer via find_package(regionstore CONFIG) and regionstore::c (C only):"
cmake -S examples/c-consumer -B "${build}/install-check/c-cmake" \
  -DCMAKE_PREFIX_PATH="${prefix}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "${build}/install-check/c-cmake" >/dev/null
"${build}/install-check/c-cmake/c-consumer" "${build}/install-check/c-cmake.rgn"

echo "C consumer via pkg-config (cc -std=c11):"
# shellcheck disable=SC2046  # pkg-config prints several words on purpose
cc -std=c11 -Wall -Wextra -Werror -pedantic -O2 examples/c-consumer/main.c \
  -o "${build}/install-check/pkgconfig-c-consumer" \
  $(pkg-config --cflags --libs regionstore) -Wl,-rpath,"${libdir}"
"${build}/install-check/pkgconfig-c-consumer" "${build}/install-check/pkgconfig-c.rgn"
# Under a prefix of its own the installed regionctl finds the library
# through RUNPATH $ORIGIN/..: it runs above from the moved tree with no
# LD_LIBRARY_PATH. (Installed to /usr it has none: scripts/check-packages.sh.)
runpath=$(readelf -d "${prefix}/bin/regionctl" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
if [[ ${runpath} != "\$ORIGIN/../${libdir#"${prefix}/"}" ]]; then
  echo "the installed regionctl's RUNPATH is '${runpath}', not \$ORIGIN/../${libdir#"${prefix}/"}" >&2
  exit 1
fi
env -u LD_LIBRARY_PATH "${prefix}/bin/regionctl" --version >/dev/null
echo "installed regionctl: $("${prefix}/bin/regionctl" --version), RUNPATH ${runpath}"

# The man page, from the prefix the way a user reads it, holds every
# subcommand's --help; the bash completion works against a real store.
if [[ -f ${prefix}/share/man/man1/regionctl.1 ]]; then
  page=$(MANPATH="${prefix}/share/man" MANWIDTH=200 man regionctl 2>/dev/null)
  for command in $("${prefix}/bin/regionctl" --help |
                   awk '/^Subcommands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }'); do
    summary=$("${prefix}/bin/regionctl" "${command}" --help | head -n 1)
    if ! grep -qF -- "${summary}" <<<"${page}"; then
      echo "man regionctl lacks '${command}': ${summary}" >&2
      exit 1
    fi
  done
  echo "man regionctl: every subcommand's --help is in the page"
elif [[ -n ${REGIONSTORE_REQUIRE_MAN:-} ]]; then
  echo "no man page installed (is help2man missing?)" >&2
  exit 1
fi
scripts/check-completion.sh "${prefix}/bin/regionctl" \
  "${prefix}/share/bash-completion/completions/regionctl" "${build}/install-check/completion"
# The installed schemas hold the installed tool's documents (strictly; Debian's
# python3, which has python3-jsonschema).
"${prefix}/bin/regionctl" inspect "${build}/install-check/pkgconfig-c.rgn" --json \
  >"${build}/install-check/inspect.json"
"${prefix}/bin/regionctl" verify "${build}/install-check/pkgconfig-c.rgn" --json \
  >"${build}/install-check/verify.json"
/usr/bin/python3 scripts/check-json-schema.py --strict "${prefix}/share/regionstore/schemas" \
  inspect "${build}/install-check/inspect.json" verify "${build}/install-check/verify.json"
echo "installed schemas: $(find "${prefix}/share/regionstore/schemas" -name '*.schema.json' | wc -l)" \
     "files; inspect and verify documents validate against them"
