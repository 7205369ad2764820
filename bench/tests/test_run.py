"""bench/run, the benchmarks' one entry point: its subcommands, and the
driver's reports, whose paths are relative to the repository."""
import json
import os
import stat
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
RUN = os.path.join(BENCH, "run")
sys.path.insert(0, BENCH)
import driver  # noqa: E402

SUBCOMMANDS = ["compare", "sweep", "memory", "scaling", "threads", "python", "pairs", "pyab", "ab"]
TINY = os.path.join(ROOT, "fixtures", "react", "19.3.1", "prod", "tiny-37b.rsc")


@pytest.fixture
def no_build(tmp_path):
    """An environment whose cmake and npm fail: a run that tried to build or
    install would exit with their status."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("cmake", "npm"):
        p = bin_dir / tool
        p.write_text("#!/bin/sh\necho %s must not run >&2\nexit 97\n" % tool)
        p.chmod(p.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ.get("PATH", "")))
    env.pop("BENCH_NO_BUILD", None)
    return env


def run(args, env):
    return subprocess.run([RUN] + args, capture_output=True, text=True, env=env, timeout=60)


def test_help_lists_every_subcommand(no_build):
    p = run(["--help"], no_build)
    assert p.returncode == 0, p.stderr
    listed = [line.split()[0] for line in p.stdout.splitlines() if line.startswith("  ") and line.split()]
    for sub in SUBCOMMANDS:
        assert sub in listed, sub


def test_unknown_subcommand_exits_2(no_build):
    p = run(["nosuch"], no_build)
    assert p.returncode == 2
    assert "unknown subcommand 'nosuch'" in p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_each_subcommand_has_help_and_help_builds_nothing(sub, no_build):
    p = run([sub, "--help"], no_build)
    assert p.returncode == 0, p.stderr
    assert "bench/run " + sub in p.stdout


def test_pairs_without_builds_is_a_usage_error(no_build):
    p = run(["pairs"], no_build)
    assert p.returncode == 2
    assert "usage: bench/run pairs OLD_BUILD" in p.stderr


def test_no_subcommand_means_compare():
    a, argv = driver.parse_args(["--rounds", "3"])
    assert a.mode == "compare" and a.rounds == 3
    assert argv == ["compare", "--rounds", "3"]
    a, _ = driver.parse_args([])
    assert a.mode == "compare" and a.decoders == ",".join(driver.DECODERS)


def test_each_study_runs_its_own_decoders():
    assert driver.parse_args(["sweep"])[0].decoders == "rscflight"
    assert driver.parse_args(["sweep", "--sweep-js"])[0].decoders == "rscflight,19.3.1"
    assert driver.parse_args(["memory", "--memory-synthetic"])[0].memory_synthetic
    assert driver.parse_args(["threads", "--nthreads", "4"])[0].nthreads == 4
    assert driver.parse_args(["scaling", "--decoders", "rscflight"])[0].scaling_max == "100M"


@pytest.mark.parametrize("flag", ["--sweep", "--memory", "--scaling", "--threads", "--all", "--no-compare"])
def test_old_study_flags_name_their_subcommand(flag, capsys):
    with pytest.raises(SystemExit) as e:
        driver.parse_args([flag])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "%s is gone: use " % flag in err and "bench/run" in err


def test_options_of_another_mode_are_refused(capsys):
    with pytest.raises(SystemExit) as e:
        driver.parse_args(["threads", "--sweep-js"])
    assert e.value.code == 2


def test_rel_makes_paths_inside_the_repository_relative():
    assert driver.rel(os.path.join(ROOT, "fixtures", "a.rsc")) == os.path.join("fixtures", "a.rsc")
    assert driver.rel("/elsewhere/a.rsc") == "/elsewhere/a.rsc"
    assert driver.rel(os.path.dirname(ROOT)) == os.path.dirname(ROOT)
    assert driver.rel("fixtures/a.rsc") == "fixtures/a.rsc"
    assert driver.rel_arg("--cli=" + os.path.join(ROOT, "build", "x")) == "--cli=" + os.path.join("build", "x")


FAKE_CLI = """#!%s
import json, os, sys
if "--version" in sys.argv:
    print("rscflight fake")
    sys.exit(0)
path = sys.argv[-1]
print(json.dumps([{"file": path, "bytes": os.path.getsize(path), "median_ns": 1000.0,
                   "mb_per_s": 1.0, "peak_bytes": 100}]))
"""


def test_compare_writes_paths_relative_to_the_repository(tmp_path, monkeypatch):
    cli = tmp_path / "rscflight"
    cli.write_text(FAKE_CLI % sys.executable)
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    out = tmp_path / "out"
    monkeypatch.setenv("RSCFLIGHT_BENCH_LAUNCHER", "bench/run")
    rc = driver.main(["--cli", str(cli), "--decoders", "rscflight,parse-only", "--rounds", "1",
                      "--files", TINY, "--out-dir", str(out)])
    assert rc == 0
    with open(out / "latest.json") as f:
        res = json.load(f)
    rel_tiny = os.path.relpath(TINY, ROOT)
    assert [r["file"] for r in res["results"]] == [rel_tiny]
    assert res["command"].startswith("bench/run compare ")
    assert " --files %s " % rel_tiny in res["command"]
    md = (out / "latest.md").read_text()
    assert "bench --json --min-time 0.2 --reuse %s" % rel_tiny in md
    for text in (md, json.dumps(res)):
        assert ROOT + os.sep not in text


def test_results_carry_no_machine_paths():
    bad = []
    for dp, _, files in os.walk(os.path.join(BENCH, "results")):
        for name in files:
            path = os.path.join(dp, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for prefix in ("/work/", "/tmp/", "/home/", "/root/"):
                if prefix in text:
                    bad.append("%s: %s" % (os.path.relpath(path, ROOT), prefix))
    assert not bad, bad


def test_compare_times_the_walk_floor_with_its_flag(tmp_path, monkeypatch):
    """--parse-walk is passed to the CLI for the walk floor, and its ratio
    and the peak per input byte reach the table (fake times: all 1000 ns,
    peak 100 bytes)."""
    log = tmp_path / "args.log"
    cli = tmp_path / "rscflight"
    cli.write_text(FAKE_CLI.replace("path = sys.argv[-1]",
                                    "open(%r, 'a').write(' '.join(sys.argv[1:]) + '\\n')\npath = sys.argv[-1]"
                                    % str(log)) % sys.executable)
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    out = tmp_path / "out"
    rc = driver.main(["--cli", str(cli), "--decoders", "rscflight,parse-only,parse-walk", "--rounds", "1",
                      "--files", TINY, "--out-dir", str(out)])
    assert rc == 0
    calls = log.read_text().splitlines()
    assert sum("--parse-walk" in c for c in calls) == 1, calls
    assert not any("--parse-walk" in c and "--parse-only" in c for c in calls), calls
    with open(out / "latest.json") as f:
        res = json.load(f)
    r = res["results"][0]
    assert r["ratios"]["of_walk"] == 1.0 and r["ratios"]["walk_of_parse"] == 1.0
    assert r["peak_per_byte"] == 100 / os.path.getsize(TINY)
    md = (out / "latest.md").read_text()
    assert "of floor + walk" in md and "peak / input" in md


def test_compare_sets_the_encoder_beside_decode_and_react_server(tmp_path, monkeypatch):
    """The writers' columns: `bench --encode` gives the encode and the decode
    it timed beside it (fake: 3000 and 2000 ns), React's server is
    serverbench.js under the react-server condition (fake: 9000 ns)."""
    log = tmp_path / "args.log"
    cli = tmp_path / "rscflight"
    cli.write_text(FAKE_CLI.replace(
        "path = sys.argv[-1]\n",
        "path = sys.argv[-1]\nopen(%r, 'a').write('cli ' + ' '.join(sys.argv[1:]) + '\\n')\n"
        "if '--encode' in sys.argv:\n"
        "    print(json.dumps([{'file': path, 'bytes': os.path.getsize(path), 'encoded_bytes': 37,\n"
        "                       'decode_median_ns': 2000.0, 'encode_median_ns': 3000.0}]))\n"
        "    sys.exit(0)\n" % str(log)) % sys.executable)
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    node = tmp_path / "node"
    node.write_text("""#!%s
import json, os, sys
open(%r, 'a').write('node ' + os.environ.get('NODE_ENV', '') + ' ' + ' '.join(sys.argv[1:]) + '\\n')
path = sys.argv[-1]
print(json.dumps({"file": path, "bytes": os.path.getsize(path), "client": "react-server",
                  "median_ns": 9000, "mb_per_s": 0.1, "n": 5}))
""" % (sys.executable, str(log)))
    node.chmod(node.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(driver.Runner, "have_js", lambda self: True)
    out = tmp_path / "out"
    rc = driver.main(["--cli", str(cli), "--node", str(node), "--decoders", "rscflight,encode,react-server",
                      "--rounds", "3", "--files", TINY, "--out-dir", str(out)])
    assert rc == 0
    calls = log.read_text().splitlines()
    assert sum(c.startswith("cli ") and "--encode" in c for c in calls) == 3, calls
    server = [c for c in calls if c.startswith("node ") and "--version" not in c]
    assert len(server) == 3 and all(c.startswith("node production --conditions=react-server ") and
                                    "serverbench.js" in c for c in server), server
    with open(out / "latest.json") as f:
        r = json.load(f)["results"][0]
    assert r["median_ns"]["encode"] == 3000.0 and r["median_ns"]["react-server"] == 9000.0
    assert r["ratios"]["encode_vs_decode"] == 1.5
    assert r["ratios"]["encode_vs_react_server"] == 3.0
    md = (out / "latest.md").read_text()
    for col in ("encode vs decode", "React server", "encode vs React server"):
        assert col in md, col
