#!/usr/bin/env python3
"""Build description of the cffi extension rscflight._rscflight.

API mode, out of line: the C declarations are read from include/rscflight.h
itself, between its ``/* cdef:begin */`` and ``/* cdef:end */`` markers, each
time the extension is built (never copied by hand, so the binding cannot
drift from the header). set_source() adds the binding's own C files
(SOURCES, one translation unit, _rscpy.h says what each holds): the native
converter that builds Python objects from decoded values in bulk.

Used by python/CMakeLists.txt (``build_ffi.py --emit OUT.c``: cffi writes the
C source, CMake compiles it against the library) and by python/setup.py
(the same C source, compiled by setuptools). Standard library + cffi only.
"""

import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = "rscflight._rscflight"

# The binding's C files, included in this order into the extension's source
# (each uses what the earlier ones define).
SOURCES = ("_types.c", "_text.c", "_convert.c", "_dumps.c", "_decoder.c")

# Declared here, defined in _decoder.c: registers the converter's CPython
# functions on the extension module (called once at import).
EXTRA_CDEF = "int rscpy_install(const char *module_name);\n"

# What librscflight.a needs at link time (CMakeLists.txt: simdjson,
# double-conversion, utf8proc; the C++ runtime for the simdjson shim).
LINK_LIBRARIES = ["simdjson", "double-conversion", "utf8proc", "stdc++", "m"]

_BLOCK = re.compile(r"/\*\s*cdef:begin\s*\*/(.*?)/\*\s*cdef:end\s*\*/", re.S)


def default_header():
    return os.path.join(os.path.dirname(HERE), "include", "rscflight.h")


def extract_cdef(header_text):
    """The cffi cdef text: the header's cdef block, RSC_API removed."""
    m = _BLOCK.search(header_text)
    if not m:
        raise ValueError("rscflight.h has no /* cdef:begin */ ... /* cdef:end */ block")
    body = m.group(1)
    if re.search(r"^\s*#", re.sub(r"/\*.*?\*/", "", body, flags=re.S), re.M):
        raise ValueError("the cdef block must not contain preprocessor lines")
    return re.sub(r"\bRSC_API\s+", "", body)


def make_ffi(header=None, **source_kwargs):
    """An FFI object for the extension, declarations taken from `header`."""
    import cffi

    header = header or default_header()
    with open(header, encoding="utf-8") as f:
        cdef = extract_cdef(f.read())
    converter = "".join('#include "%s"\n' % name for name in SOURCES)
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.cdef(EXTRA_CDEF)
    # _rscpy.h starts with Python.h; cffi's own prologue includes it too.
    include_dirs = [os.path.dirname(header), HERE] + list(source_kwargs.pop("include_dirs", ()))
    ffi.set_source(MODULE, converter, include_dirs=include_dirs, **source_kwargs)
    return ffi


def cmake_cache_value(build_dir, name):
    """A variable of a CMake build directory's cache, or None."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.rstrip("\n").split("=", 1)[1]
    except OSError:
        pass
    return None


def static_link_kwargs(build_dir):
    """set_source() keywords that link the static library of a CMake build
    directory into the extension (for ffi.compile(); setup.py does the same
    through setuptools). A library built with RSC_SANITIZER needs the
    sanitizer runtimes linked in too."""
    link = ["-Wl,--exclude-libs,ALL"]
    sanitizer = cmake_cache_value(build_dir, "RSC_SANITIZER")
    if sanitizer:
        link.append("-fsanitize=" + sanitizer)
    return dict(
        include_dirs=[os.path.join(build_dir, "include")],
        extra_objects=[os.path.join(build_dir, "librscflight.a")],
        libraries=list(LINK_LIBRARIES),
        extra_link_args=link,
        define_macros=[("_CFFI_NO_LIMITED_API", "1")],
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", default=default_header(), help="include/rscflight.h")
    ap.add_argument("--emit", metavar="OUT.c", required=True, help="write the extension's C source here")
    a = ap.parse_args(argv)
    emit(make_ffi(a.header), a.emit)
    return 0


def emit(ffi, path):
    """Write the extension's C source to path (only if its text changed)."""
    tmp = path + ".tmp"
    ffi.emit_c_code(tmp)
    with open(tmp, "rb") as f:
        # The binding uses CPython's full API: cffi must not select the limited one.
        new = b"#define _CFFI_NO_LIMITED_API 1\n" + f.read()
    os.remove(tmp)
    old = None
    if os.path.exists(path):
        with open(path, "rb") as f:
            old = f.read()
    if old != new:
        with open(path + ".tmp", "wb") as f:
            f.write(new)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())
