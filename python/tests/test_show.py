"""The command-line reader of one result file, as the README tells users to run it."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_python_without_the_dependencies_gets_one_line_naming_the_command_that_works(tmp_path):
    # A Python whose h5py is missing: a package of that name that fails to import as a
    # missing module does, first on the path.
    fake = tmp_path / "h5py"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'h5py'\", name='h5py')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT / "python")]))
    out = subprocess.run([sys.executable, "-m", "xnet_study", "show", "x.h5"], env=env,
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 1, out
    assert out.stderr.startswith("error: xnet_study needs h5py, pandas and matplotlib"), out.stderr
    assert "has no h5py" in out.stderr and ".venv/bin/xnet-study" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    # Imported as a library, the same reason comes as the ModuleNotFoundError's message.
    lib = subprocess.run([sys.executable, "-c", "import xnet_study"], env=env, capture_output=True, text=True)
    assert lib.returncode == 1 and "ModuleNotFoundError: xnet_study needs h5py" in lib.stderr, lib.stderr


def test_the_readme_names_commands_that_exist():
    readme = (ROOT / "README.md").read_text()
    # The entry point the README shows is the one the package declares ...
    script = re.search(r'^(\S+) = "xnet_study.__main__:main"$', (ROOT / "python/pyproject.toml").read_text(), re.M)
    assert script and f".venv/bin/{script.group(1)} show FILE" in readme
    # ... and `cargo install --path cli` installs a binary named xnet.
    assert "cargo install\n--locked --path cli" in readme or "cargo install --locked --path cli" in readme
    cargo = (ROOT / "cli/Cargo.toml").read_text()
    assert re.search(r'\[\[bin\]\]\nname = "xnet"', cargo), cargo


def test_the_installed_entry_point_shows_a_result_file(study_dir):
    entry = Path(sys.executable).parent / "xnet-study"
    if not entry.exists():
        pytest.skip(f"xnet-study is not installed next to {sys.executable} (scripts/bootstrap.sh installs it)")
    run = sorted((study_dir / "runs").glob("*.h5"))[0]
    out = subprocess.run([str(entry), "show", str(run)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "completed" in out.stdout, out.stdout
