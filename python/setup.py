"""Builds regionstore's Python package: the extension module with CMake (the
repository's CMakeLists.txt with REGIONSTORE_BUILD_PYTHON=ON), then the
package around it. REGIONSTORE_CMAKE_BUILD_DIR names an already configured
build tree to build in (the test command reuses build/release); the default
is build/python of the repository, configured for the module alone."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def pybind11_cmake_dir():
    """The directory of pybind11Config.cmake: from the pybind11 module (pip's
    pybind11) or where CMake's find_package looks for Debian's pybind11-dev;
    None if neither has it."""
    if importlib.util.find_spec("pybind11") is not None:
        import pybind11
        return pybind11.get_cmake_dir()
    roots = [os.environ.get("pybind11_DIR", "")]
    for prefix in (os.environ.get("CMAKE_PREFIX_PATH", "").split(os.pathsep) +
                   [sys.prefix, sys.base_prefix, "/usr/local", "/usr"]):
        if prefix:
            roots += [os.path.join(prefix, sub, "cmake", "pybind11") for sub in ("lib", "share")]
    for root in roots:
        if root and os.path.isfile(os.path.join(root, "pybind11Config.cmake")):
            return root
    return None


def missing_build_requirements():
    """What the build needs and this interpreter lacks, each with where to get it."""
    missing = []
    for module, debian in (("setuptools", "python3-setuptools"), ("wheel", "python3-wheel")):
        if importlib.util.find_spec(module) is None:
            missing.append(f"the Python module '{module}' (Debian: {debian})")
    if pybind11_cmake_dir() is None:
        missing.append("pybind11, neither as a Python module nor as a CMake package "
                       "(Debian: pybind11-dev)")
    if shutil.which("cmake") is None:
        missing.append("cmake (Debian: cmake)")
    return missing


# Checked before anything else, so that what is missing is said in one line
# (pip shows it as the build's output), not as pip's "invalid command
# 'bdist_wheel'" or a CMake error pages long. The usual cause is a venv made
# with another python3 than Debian's, which has none of Debian's modules.
MISSING = missing_build_requirements()
if MISSING:
    sys.exit(f"regionstore: cannot build with {sys.executable}: it lacks "
             f"{'; '.join(MISSING)}. Make the environment with Debian's interpreter: "
             f"/usr/bin/python3 -m venv --system-site-packages VENV")

from setuptools import Extension, setup  # noqa: E402: after the check above
from setuptools.command.build_ext import build_ext  # noqa: E402


def project_version():
    text = (ROOT / "include" / "regionstore" / "version.h").read_text()
    parts = [re.search(rf"#define REGIONSTORE_VERSION_{part} (\d+)", text).group(1)
             for part in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        given = os.environ.get("REGIONSTORE_CMAKE_BUILD_DIR")
        build = Path(given).resolve() if given else ROOT / "build" / "python"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build),
                     "-DREGIONSTORE_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
                     f"-Dpybind11_DIR={pybind11_cmake_dir()}"]
        if not given:
            configure += ["-DCMAKE_BUILD_TYPE=Release", "-DREGIONSTORE_BUILD_TOOLS=OFF",
                          "-DREGIONSTORE_BUILD_TESTS=OFF", "-DREGIONSTORE_BUILD_BENCH=OFF",
                          "-DREGIONSTORE_INSTALL=OFF"]
        subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", str(build), "--target", "regionstore_python",
                        "-j", str(os.cpu_count() or 1)], check=True)
        built = sorted((build / "python").glob("_regionstore*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _regionstore*.so in {build / 'python'}, found {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    name="regionstore",
    version=project_version(),
    description="mmap-backed persistent region store with explicit durability modes",
    license="see LICENSE in the repository",
    python_requires=">=3.9",
    packages=["regionstore"],
    package_data={"regionstore": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("regionstore._regionstore", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
