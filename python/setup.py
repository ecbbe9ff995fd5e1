"""Builds regionstore's Python package: the extension module with CMake (the
repository's CMakeLists.txt with REGIONSTORE_BUILD_PYTHON=ON), then the
package around it. REGIONSTORE_CMAKE_BUILD_DIR names an already configured
build tree to build in (the test command reuses build/release); the default
is build/python of the repository, configured for the module alone."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


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
                     "-DREGIONSTORE_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
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
