#!/usr/bin/env bash
# Builds the Debian packages of a built tree (cpack -G DEB: the runtime
# library, the development files, regionctl), unpacks them into a scratch
# root with dpkg -x, and builds and runs the consumer examples against that
# root and regionctl from it. Then configures a FetchContent consumer
# (examples/fetchcontent) with CLI11, nlohmann-json, Catch2 and Google
# Benchmark made unfindable: as a subproject, regionstore must need none.
# Usage: scripts/check-packages.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
build=$(cd "${1:?usage: check-packages.sh BUILD_DIR}" && pwd)
work="${build}/package-check"
rm -rf "${work}"
mkdir -p "${work}/debs" "${work}/root"

cpack -G DEB --config "${build}/CPackConfig.cmake" -B "${work}/debs" >/dev/null
rm -rf "${work}/debs/_CPack_Packages"
mapfile -t debs < <(find "${work}/debs" -name '*.deb' | sort)
if ((${#debs[@]} != 3)); then
  echo "expected 3 packages, found: ${debs[*]}" >&2
  exit 1
fi
for deb in "${debs[@]}"; do
  echo "package: $(dpkg-deb -f "${deb}" Package) $(dpkg-deb -f "${deb}" Version)," \
       "depends: $(dpkg-deb -f "${deb}" Depends)"
  dpkg -x "${deb}" "${work}/root"
done
root="${work}/root/usr"
runtime=$(dpkg-deb -f "$(printf '%s\n' "${debs[@]}" | grep '/libregionstore[0-9]')" Package)
for package in libregionstore-dev regionctl; do
  deb=$(printf '%s\n' "${debs[@]}" | grep "/${package}_")
  dpkg-deb -f "${deb}" Depends | grep -q "${runtime} (= " ||
    { echo "${package} does not depend on ${runtime} of its own version" >&2; exit 1; }
done
# Each file in exactly one package.
dupes=$(for deb in "${debs[@]}"; do dpkg-deb -c "${deb}" | awk '$1 !~ /^d/ {print $6}'; done |
        sort | uniq -d)
[[ -z ${dupes} ]] || { echo "files in more than one package: ${dupes}" >&2; exit 1; }

# The library is in Debian's multiarch directory, as dpkg and ld.so expect.
multiarch=$(gcc -print-multiarch)
if ! compgen -G "${root}/lib/${multiarch}/libregionstore.so.*" >/dev/null; then
  echo "the runtime package has no /usr/lib/${multiarch}/libregionstore.so.* (a build tree" \
       "configured before the multiarch default keeps CMAKE_INSTALL_LIBDIR=lib: cmake --fresh):" >&2
  (cd "${work}/root" && find . -name 'libregionstore*') >&2
  exit 1
fi
echo "packages: the library is in /usr/lib/${multiarch}"
# No rpath in a packaged binary (Debian's policy): ld.so finds the library in
# the multiarch directory. Elsewhere an install keeps RUNPATH $ORIGIN/..
# (scripts/check-install.sh).
if readelf -d "${root}/bin/regionctl" | grep -E '\((RPATH|RUNPATH)\)'; then
  echo "the packaged /usr/bin/regionctl carries the rpath above" >&2
  exit 1
fi
# The .pc file names /usr, so pkg-config prints no -I for the system's own
# include directory (or -I/usr/include where it keeps it), never a path
# through the pkgconfig directory.
pc="${root}/lib/${multiarch}/pkgconfig/regionstore.pc"
if [[ $(head -n 1 "${pc}") != "prefix=/usr" ]]; then
  echo "the packaged regionstore.pc does not name /usr: $(head -n 1 "${pc}")" >&2
  exit 1
fi
cflags=$(PKG_CONFIG_PATH="${root}/lib/${multiarch}/pkgconfig" pkg-config --cflags regionstore)
if [[ -n ${cflags// /} && ${cflags// /} != "-I/usr/include" ]]; then
  echo "pkg-config --cflags regionstore from the package prints '${cflags}'" >&2
  exit 1
fi
echo "packages: /usr/bin/regionctl has no RUNPATH; pkg-config --cflags prints '${cflags// /}'"
export LD_LIBRARY_PATH="${root}/lib/${multiarch}"
cmake -S examples/consumer -B "${work}/consumer" -DCMAKE_PREFIX_PATH="${root}" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "${work}/consumer" >/dev/null
"${work}/consumer/consumer" "${work}/consumer.rgn"
cmake -S examples/c-consumer -B "${work}/c-consumer" -DCMAKE_PREFIX_PATH="${root}" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "${work}/c-consumer" >/dev/null
"${work}/c-consumer/c-consumer" "${work}/c-consumer.rgn"
"${root}/bin/regionctl" verify "${work}/consumer.rgn" >/dev/null
echo "packages: the consumers built against the unpacked packages ran; their regionctl" \
     "($("${root}/bin/regionctl" --version)) verified a store"

cmake --no-warn-unused-cli -S examples/fetchcontent -B "${work}/fetchcontent" \
  -DREGIONSTORE_SOURCE_DIR="${repo}" \
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON >/dev/null
if grep -q 'regionctl\|regionstore_tests\|regionstore_bench' "${work}/fetchcontent/Makefile" \
     "${work}/fetchcontent/CMakeFiles/TargetDirectories.txt"; then
  echo "the FetchContent consumer's build has regionstore's tools, tests or benchmarks" >&2
  exit 1
fi
echo "FetchContent: configured without CLI11, nlohmann-json, Catch2 and Google Benchmark;" \
     "only the library is built"
