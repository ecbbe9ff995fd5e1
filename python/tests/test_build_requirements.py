"""The package's build (python/setup.py) says in one line what it lacks when
`wheel` or pybind11 is missing, through pip as well as run directly, instead
of pip's "invalid command 'bdist_wheel'" or pages of CMake."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1]

# Runs setup.py --name with the modules named in argv[1] (comma-separated)
# made unimportable; with argv[2] == "no-cmake-package", pybind11's CMake
# package is hidden as well (Debian's pybind11-dev has no Python module).
RUN_HIDDEN = """
import os, runpy, sys
for name in filter(None, sys.argv[1].split(",")):
    sys.modules[name] = None
if sys.argv[2] == "no-cmake-package":
    is_file = os.path.isfile
    os.path.isfile = lambda path: "pybind11Config" not in str(path) and is_file(path)
sys.argv = [sys.argv[3], "--name"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def run_setup(hidden, cmake_package="keep"):
    return subprocess.run([sys.executable, "-c", RUN_HIDDEN, hidden, cmake_package,
                           str(SOURCE / "setup.py")],
                          capture_output=True, text=True, timeout=120, cwd=SOURCE)


def test_setup_runs_when_nothing_is_missing():
    finished = run_setup("")
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "regionstore"


@pytest.mark.parametrize("hidden,cmake_package,named", [
    ("wheel", "keep", "the Python module 'wheel' (Debian: python3-wheel)"),
    ("pybind11", "no-cmake-package",
     "pybind11, neither as a Python module nor as a CMake package (Debian: pybind11-dev)"),
])
def test_setup_names_what_is_missing_in_one_line(hidden, cmake_package, named):
    finished = run_setup(hidden, cmake_package)
    assert finished.returncode == 1
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1, finished.stderr
    assert named in lines[0]
    assert sys.executable in lines[0]
    assert "/usr/bin/python3 -m venv --system-site-packages" in lines[0]
    assert finished.stdout == ""


def test_pip_shows_the_one_line_when_wheel_is_not_importable(tmp_path):
    # The README's pip flags, building a wheel (never installing) with an
    # interpreter whose `wheel` is hidden by a sitecustomize.
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['wheel'] = None\n")
    env = dict(os.environ, PYTHONPATH=str(hide))
    finished = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(tmp_path / "wheels"), str(SOURCE)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert finished.returncode != 0
    output = finished.stdout + finished.stderr
    assert "invalid command 'bdist_wheel'" not in output
    assert "[1 lines of output]" in output, output
    assert "it lacks the Python module 'wheel' (Debian: python3-wheel)" in output, output
    assert not list(tmp_path.glob("wheels/*.whl"))
