"""The binding is built from today's include/rscflight.h: the declarations
are extracted at build time, so a declaration added to the header's cdef
block shows up in the extension without touching python/."""

import os
import re
import shutil
import subprocess
import sys

import pytest

import rscflight as R
from conftest import ROOT, build_dir

PYDIR = os.path.join(ROOT, "python")
sys.path.insert(0, PYDIR)
import build_ffi  # noqa: E402

HEADER = os.path.join(ROOT, "include", "rscflight.h")


def _block():
    with open(HEADER, encoding="utf-8") as f:
        return build_ffi.extract_cdef(f.read())


def test_every_header_function_is_in_lib():
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    block = text[text.index("/* cdef:begin */"):text.index("/* cdef:end */")]
    funcs = set(re.findall(r"RSC_API\s[^;]*?\b(rsc_\w+)\s*\(", block))
    assert len(funcs) > 50
    missing = sorted(f for f in funcs if not hasattr(R.lib, f))
    assert not missing, missing
    consts = set(re.findall(r"\b(RSC_[A-Z0-9_]+)\s*=", block))
    assert consts and not sorted(c for c in consts if not hasattr(R.lib, c))
    assert "RSC_API" not in _block()


def test_the_extension_calls_the_library():
    assert R.ffi.string(R.lib.rsc_version()).decode() == R.__version__
    assert R.ffi.string(R.lib.rsc_status_name(R.lib.RSC_ERR_LIMIT)) == b"limit exceeded"
    err = R.ffi.new("rsc_error *")
    d = R.lib.rsc_decode(b"0:[1,2]\n", 8, R.ffi.NULL, err)
    try:
        assert err.code == R.lib.RSC_OK
        root = R.lib.rsc_chunk_value(R.lib.rsc_decoder_root(d))
        assert R.lib.rsc_node_kind(root) == R.lib.RSC_ARRAY and R.lib.rsc_node_len(root) == 2
        v = R.ffi.new("rsc_view *")
        R.lib.rsc_node_view(R.lib.rsc_node_at(root, 1), v)
        assert v.kind == R.lib.RSC_NUMBER and v.number == 2
    finally:
        R.lib.rsc_decoder_free(d)


def test_cdef_block_is_required():
    with pytest.raises(ValueError):
        build_ffi.extract_cdef("int x;\n")


def test_every_c_file_is_built():
    """The binding's C files form one translation unit that build_ffi.py
    includes (SOURCES, the source every build path compiles); CMake's
    object depends on them and _rscpy.h names each. A C file left out of
    any of these would be dead code or a stale build."""
    on_disk = sorted(f for f in os.listdir(PYDIR) if f.endswith(".c"))
    assert sorted(build_ffi.SOURCES) == on_disk
    with open(os.path.join(PYDIR, "CMakeLists.txt"), encoding="utf-8") as f:
        listed = re.search(r"set\(RSC_PY_C ([^)]*)\)", f.read()).group(1).split()
    assert sorted(listed) == sorted(on_disk + ["_rscpy.h"])
    with open(os.path.join(PYDIR, "_rscpy.h"), encoding="utf-8") as f:
        header = f.read()
    for name in build_ffi.SOURCES:
        assert " *   %s " % name in header, name


@pytest.mark.skipif(not shutil.which("cc") and not shutil.which("gcc"), reason="needs a C compiler")
def test_builds_from_todays_header(tmp_path):
    """Compile the extension from a copy of the header with one more constant
    in its cdef block: the constant is there, nothing in python/ changed."""
    bdir = build_dir()
    if not os.path.exists(os.path.join(bdir, "librscflight.a")):
        pytest.skip("no librscflight.a in %s" % bdir)
    inc = tmp_path / "include"
    inc.mkdir()
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    text = text.replace("/* cdef:end */",
                        "/* added by test_build */\nenum { RSC_BUILD_PROBE = 4242 };\n\n/* cdef:end */")
    (inc / "rscflight.h").write_text(text, encoding="utf-8")
    ffi = build_ffi.make_ffi(str(inc / "rscflight.h"), **build_ffi.static_link_kwargs(bdir))
    pkg = tmp_path / "pkg"
    so = ffi.compile(tmpdir=str(tmp_path / "obj"), verbose=False)
    (pkg / "rscflight").mkdir(parents=True)
    shutil.copy(so, pkg / "rscflight" / os.path.basename(so))
    for f in ("__init__.py", "_types.py"):
        shutil.copy(os.path.join(PYDIR, "rscflight", f), pkg / "rscflight" / f)
    code = ("import rscflight; assert rscflight.__file__.startswith(%r), rscflight.__file__; "
            "assert rscflight.lib.RSC_BUILD_PROBE == 4242; "
            "assert rscflight.loads(b'0:[\"$\",\"div\",null,{}]\\n').type == 'div'; print('ok')"
            % str(pkg))
    env = dict(os.environ, PYTHONPATH=str(pkg))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
