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


def test_show_prints_the_saturation_bracket_and_the_jobs_slowdown(tmp_path):
    from xnet_study.show import show
    import io
    from conftest import xnet_binary

    xnet = str(xnet_binary())
    # A search for the saturation load: its bracket, even with -q.
    sweep = subprocess.run([xnet, "sweep", str(ROOT / "configs/quick.toml"), "--find-saturation", "--tolerance", "0.1",
                            "--set", "simulation.cycles=3000", "--set", "simulation.warmup=1000", "-q",
                            "-o", str(tmp_path / "sweep.h5")], capture_output=True, text=True, cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    assert "saturat" in sweep.stdout, sweep.stdout
    text = io.StringIO()
    show(tmp_path / "sweep.h5", text)
    assert re.search(r"^saturation  between [0-9.]+ and [0-9.]+, estimate [0-9.]+ \(bisection, asked within 0.1\)$",
                     text.getvalue(), re.M), text.getvalue()
    # A workload: each job's completion time, ideal time and slowdown.
    config = tmp_path / "job.toml"
    config.write_text((ROOT / "configs/quick.toml").read_text().split("[traffic]")[0]
                      + '[workload]\n[[workload.jobs]]\nname = "ar"\nkind = "allreduce"\nranks = 16\nbytes = 4096\n'
                        'compute = 100\niterations = 2\n')
    run = subprocess.run([xnet, "run", str(config), "-o", str(tmp_path / "job.h5")], capture_output=True, text=True,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    head = next(line for line in run.stdout.splitlines() if "slowdown" in line).split()
    row = next(line for line in run.stdout.splitlines() if " ar " in line).split()
    assert row[head.index("ideal")] == "200" and float(row[head.index("slowdown")]) > 1, run.stdout
    text = io.StringIO()
    show(tmp_path / "job.h5", text)
    assert "jobs (times in cycles):" in text.getvalue() and "slowdown" in text.getvalue(), text.getvalue()
    assert re.search(r"^\s+0\s+ar\s+allreduce\s", text.getvalue(), re.M), text.getvalue()
