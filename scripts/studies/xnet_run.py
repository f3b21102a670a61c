"""Running xnet from the study scripts: one run into a temporary file, its results read
there. Shared by study_transports.py and study_ethernet.py."""

import contextlib
import os
import pathlib
import subprocess
import tempfile
import time

import h5py

ROOT = pathlib.Path(__file__).resolve().parents[2]
XNET = os.environ.get("XNET", str(ROOT / "target/release/xnet"))


@contextlib.contextmanager
def run_xnet(config, overrides, threads, what=""):
    """Runs `xnet run` on `config` (a path, or the text of a config) with `--set`
    overrides on `threads` threads; yields the open result file and the wall seconds.
    A run that writes no results (a bad config) stops the script with xnet's message."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        if not isinstance(config, pathlib.Path):
            (tmp / "c.toml").write_text(config)
            config = tmp / "c.toml"
        out = tmp / "r.h5"
        args = [XNET, "run", str(config), "-q", "-t", str(threads), "-o", str(out)]
        for o in overrides:
            args += ["--set", o]
        start = time.time()
        done = subprocess.run(args, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.time() - start
        if not out.exists():
            raise SystemExit(f"{what}: no results\n{done.stderr}")
        with h5py.File(out) as f:
            yield f, wall
