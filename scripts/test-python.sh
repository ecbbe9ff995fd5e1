#!/usr/bin/env bash
# Installs the Python package the way the README says, into a fresh virtual
# environment (Debian's python3, --system-site-packages for pybind11, pytest,
# NumPy; pip offline with --no-build-isolation --no-index), then runs its
# pytest suite from outside the source tree against that install.
# Usage: scripts/test-python.sh BUILD_DIR
# The extension is built in BUILD_DIR (an already configured tree, so the
# library's objects are reused), not in build/python as a user's install is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)
build=$(cd "${1:?usage: test-python.sh BUILD_DIR}" && pwd)
work="${build}/python-check"
rm -rf "${work}"
mkdir -p "${work}"
start=${SECONDS}
/usr/bin/python3 -m venv --system-site-packages "${work}/venv"
REGIONSTORE_CMAKE_BUILD_DIR="${build}" \
  "${work}/venv/bin/pip" install --quiet --no-build-isolation --no-index "${repo}/python"
echo "python: installed into a fresh virtual environment in $((SECONDS - start)) s"
cd "${work}"
# -P: the working directory is not put on sys.path; pytest puts only
# python/tests there, so regionstore can come only from the install.
"${work}/venv/bin/python" -P -m pytest -p no:cacheprovider -q "${repo}/python/tests"
