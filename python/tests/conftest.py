"""Fixtures: a real small study, run once by the xnet binary of this checkout."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def xnet_binary() -> Path:
    path = Path(os.environ.get("XNET", ROOT / "target" / "release" / "xnet"))
    if not path.exists():
        pytest.fail(f"no xnet binary at {path}: build it first (cargo build --release) or set XNET")
    return path


STUDY = """
[study]
base = "base-config.toml"
loads = [0.1, 0.4, 0.9]
threads = 1
[set]
"simulation.cycles" = 2000
"simulation.warmup" = 500
"simulation.sample_period" = 250
"router.vcs" = 4
[grid]
"routing.algorithm" = ["dor", "valiant"]
"traffic.pattern" = ["uniform", "tornado"]
"""


@pytest.fixture(scope="session")
def study_dir(tmp_path_factory) -> Path:
    """A finished 4-run study of the quick HyperX (2 routings x 2 patterns x 3 loads)."""
    work = tmp_path_factory.mktemp("study")
    shutil.copy(ROOT / "configs" / "quick.toml", work / "base-config.toml")
    (work / "small.toml").write_text(STUDY)
    out = subprocess.run([str(xnet_binary()), "study", "small.toml", "-q", "--dir", "small"],
                         cwd=work, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return work / "small"
