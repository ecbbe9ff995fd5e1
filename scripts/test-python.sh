#!/usr/bin/env bash
# Installs the Python package with the README's own two install lines, run as
# written (Debian's /usr/bin/python3, --system-site-packages for pybind11,
# pytest, NumPy; pip offline with --no-build-isolation --no-index) into a
# fresh virtual environment, with a python3 first on PATH that is not
# Debian's, then runs the package's pytest suite from outside the source tree
# against that install.
# Usage: scripts/test-python.sh BUILD_DIR
# The extension is built in BUILD_DIR (an already configured tree, so the
# library's objects are reused), not in build/python as a user's install is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
build=$(cd "${1:?usage: test-python.sh BUILD_DIR}" && pwd)
work="${build}/python-check"
rm -rf "${work}"
mkdir -p "${work}/shim"

# The README's block after "The Python package, into a virtual environment".
install=$(awk '/^The Python package, into a virtual environment/ { found = 1 }
               found && /^```sh$/ { inside = 1; next }
               inside && /^```$/ { exit }
               inside { print }' README.md)
if [[ ${install} != *"-m venv --system-site-packages .venv"* ||
      ${install} != *"pip install --no-build-isolation --no-index ./python"* ]]; then
  echo "README.md's Python install block is not the venv and pip lines this script runs:" >&2
  echo "${install}" >&2
  exit 1
fi
# A python3 first on PATH that is not Debian's (as pyenv's would be): the
# README's lines must name the interpreter they use.
cat >"${work}/shim/python3" <<'SHIM'
#!/bin/sh
echo "test-python.sh: the README's install ran python3 from PATH, not the interpreter it names" >&2
exit 97
SHIM
chmod +x "${work}/shim/python3"
ln -s "${repo}/python" "${work}/python"
start=${SECONDS}
(cd "${work}" && PATH="${work}/shim:${PATH}" PIP_QUIET=1 REGIONSTORE_CMAKE_BUILD_DIR="${build}" \
   bash -euo pipefail -c "${install}")
echo "python: installed with README.md's lines into a fresh virtual environment in" \
     "$((SECONDS - start)) s"
cd "${work}"
# -P: the working directory is not put on sys.path; pytest puts only
# python/tests there, so regionstore can come only from the install.
"${work}/.venv/bin/python" -P -m pytest -p no:cacheprovider -q "${repo}/python/tests"
