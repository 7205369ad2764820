"""pip install --no-build-isolation ./python

Builds the cffi extension rscflight._rscflight from this repository's
include/rscflight.h (declarations extracted at build time, build_ffi.py) and
links the library into it statically, so the installed package needs no
shared library. The library comes from RSCFLIGHT_BUILD_DIR (a CMake build
directory holding librscflight.a) when set, else CMake builds it here first
(needs cmake, a C/C++ compiler and the Debian packages the library needs:
libsimdjson-dev, libdouble-conversion-dev, libutf8proc-dev).
"""

import os
import re
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HEADER = os.path.join(ROOT, "include", "rscflight.h")
sys.path.insert(0, HERE)

import build_ffi  # noqa: E402  (standard library + cffi, the latter imported lazily)


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(rscflight\s+VERSION\s+([0-9.]+)", f.read())
    return m.group(1) if m else "0.0.0"


def library_build_dir(build_temp):
    given = os.environ.get("RSCFLIGHT_BUILD_DIR")
    if given:
        given = os.path.abspath(given)
        if not os.path.exists(os.path.join(given, "librscflight.a")):
            sys.exit("RSCFLIGHT_BUILD_DIR=%s holds no librscflight.a" % given)
        return given
    out = os.path.abspath(os.path.join(build_temp, "cmake"))
    subprocess.check_call(["cmake", "-S", ROOT, "-B", out, "-DCMAKE_BUILD_TYPE=Release",
                           "-DRSC_BUILD_TESTS=OFF", "-DRSC_BUILD_PYTHON=OFF"])
    subprocess.check_call(["cmake", "--build", out, "--target", "rscflight_static",
                           "-j%d" % (os.cpu_count() or 2)])
    return out


class BuildExt(build_ext):
    """Generates the extension's C source (cffi, API mode) and links the library."""

    def run(self):
        if not os.path.exists(HEADER):
            sys.exit("rscflight: %s not found: build from a checkout of the repository" % HEADER)
        lib_dir = library_build_dir(self.build_temp)
        os.makedirs(self.build_temp, exist_ok=True)
        source = os.path.join(self.build_temp, "_rscflight.c")
        build_ffi.emit(build_ffi.make_ffi(HEADER), source)
        for ext in self.extensions:
            ext.sources = [source]
            ext.include_dirs += [HERE, os.path.join(ROOT, "include"), os.path.join(lib_dir, "include")]
            ext.extra_objects += [os.path.join(lib_dir, "librscflight.a")]
            kw = build_ffi.static_link_kwargs(lib_dir)
            ext.libraries += kw["libraries"]
            ext.extra_link_args += kw["extra_link_args"]
        super().run()


setup(
    version=version(),
    ext_modules=[Extension("rscflight._rscflight", sources=list(build_ffi.SOURCES))],  # replaced in BuildExt
    cmdclass={"build_ext": BuildExt},
)
