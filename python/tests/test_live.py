"""Reading a result file while `xnet` is still writing it: the README's own snippet and the
package's readers work by default (no HDF5 file lock for readers)."""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import xnet_study as xs
from conftest import ROOT, xnet_binary


def _readme_snippet() -> str:
    """The README's pandas snippet ("Reading the results"), as written there."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Reading the results"):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README: no Python snippet under 'Reading the results'"
    return match.group(1)


def _rows(path: Path) -> int:
    try:
        with xs.open_result(path) as f:
            return len(f["points/000/timeseries"]) if "points/000/timeseries" in f else 0
    except OSError:
        return 0


@pytest.fixture
def running(tmp_path):
    """`xnet run` (the built-in default, for hours) writing xnet-default.h5 in tmp_path."""
    proc = subprocess.Popen(
        [str(xnet_binary()), "run", "-q", "-t", "1", "--set", "simulation.cycles=100000000"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = tmp_path / "xnet-default.h5"
    try:
        deadline = time.monotonic() + 60
        while _rows(out) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no time-series rows within 60 s"
            time.sleep(0.2)
        yield out
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    assert proc.returncode == 130, proc.stderr.read()


def test_the_readme_snippet_reads_a_file_being_written(running):
    # As written in the README: /summary is there (empty) before the first point ends.
    out = subprocess.run([sys.executable, "-c", _readme_snippet()],
                         cwd=running.parent, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("running"), out.stdout


def test_the_package_reads_a_file_being_written_and_sees_it_grow(running):
    first = xs.read_timeseries(running)
    assert len(first) >= 2
    run = xs.read_run(running)
    assert set(run["status"]) <= {"running"}
    with xs.open_result(running) as f:
        assert f.attrs["status"] == "running"
    deadline = time.monotonic() + 30
    while len(xs.read_timeseries(running)) <= len(first):
        assert time.monotonic() < deadline, "no new row within 30 s"
        time.sleep(0.2)
