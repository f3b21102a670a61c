"""The Python package against a real study: tables equal the HDF5 values, every plot kind
renders, the report is one self-contained page."""

import base64
import re

import h5py
import numpy as np
import pytest

import xnet_study as xs


def test_the_study_table_has_one_row_per_run_and_load_with_the_overrides(study_dir):
    df = xs.read_study(study_dir)
    assert len(df) == 4 * 3
    assert sorted(df["run"].unique()) == ["000-dor-uniform", "001-dor-tornado",
                                          "002-valiant-uniform", "003-valiant-tornado"]
    assert set(df["routing.algorithm"]) == {"dor", "valiant"}
    assert set(df["traffic.pattern"]) == {"uniform", "tornado"}
    assert df.attrs["keys"] == ["routing.algorithm", "traffic.pattern"]
    # The override columns say what the file says it ran.
    for _, row in df.iterrows():
        assert row["routing"] == row["routing.algorithm"]


def test_table_values_are_the_hdf5_values(study_dir):
    df = xs.read_study(study_dir)
    rows = df[df["run"] == "001-dor-tornado"].sort_values("load")
    with h5py.File(study_dir / "runs" / "001-dor-tornado.h5", "r") as f:
        summary = f["summary"][:]
        for k, g in enumerate(sorted(f["points"].keys())):
            point = f["points"][g]
            assert rows["load"].iloc[k] == pytest.approx(point.attrs["load"])
            assert rows["accepted_load"].iloc[k] == point.attrs["accepted_load"]
            assert rows["latency_p99"].iloc[k] == point.attrs["latency_p99"]
        np.testing.assert_array_equal(rows["latency_mean"].to_numpy(), summary["latency_mean"])
        assert rows["wall_seconds"].iloc[0] == pytest.approx(f.attrs["wall_seconds"])


def test_saturation_is_marked(study_dir):
    df = xs.read_study(study_dir)
    # DOR under tornado on an 8x8 HyperX carries at most 1/8 phit/cycle per endpoint
    # (all 8 endpoints of a switch share one link): 0.4 and 0.9 saturate, 0.1 does not.
    dor = df[df["run"] == "001-dor-tornado"].set_index("load")["saturated"]
    assert not dor[0.1] and dor[0.4] and dor[0.9]
    assert df[df["run"] == "001-dor-tornado"]["accepted_load"].max() < 0.13


def test_status_lists_every_run(study_dir):
    status = xs.study_status(study_dir)
    assert list(status["state"]) == ["done"] * 4
    assert (status["status"] == "completed").all()
    assert (status["wall_seconds"] > 0).all()


@pytest.mark.parametrize("kind", ["latency", "throughput", "percentiles"])
def test_curve_plots_render(study_dir, tmp_path, kind):
    df = xs.read_study(study_dir)
    plot = {"latency": xs.plot_latency, "throughput": xs.plot_throughput,
            "percentiles": xs.plot_percentiles}[kind]
    fig = plot(df, by="routing.algorithm", facet="traffic.pattern")
    assert len(fig.axes) == 2
    # One curve per routing in each panel (saturated points are extra, unjoined markers).
    assert sum(1 for line in fig.axes[0].lines if line.get_linestyle() != "None") >= 2
    # One legend, naming every routing, outside every panel (it covered curves inside one).
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == 1
    names = {t.get_text().split()[0] for t in legends[0].get_texts()}
    assert names == set(df["routing.algorithm"].unique()), names
    fig.canvas.draw()
    box = legends[0].get_window_extent()
    assert not any(box.overlaps(ax.get_window_extent()) for ax in fig.axes), kind
    png, svg = xs.save(fig, tmp_path / kind)
    assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in open(svg).read(2000)


def test_run_level_plots_render(study_dir, tmp_path):
    path = study_dir / "runs" / "000-dor-uniform.h5"
    for name, fig in [("ts", xs.plot_timeseries(path, 1)),
                      ("heat", xs.plot_link_heatmap(path, 1)),
                      ("vcs", xs.plot_vc_usage(path, 1))]:
        png, _ = xs.save(fig, tmp_path / name)
        assert open(png, "rb").read(4) == b"\x89PNG"
    links = xs.read_links(path, 1)
    assert len(links) == 64 * 14  # 64 switches x 14 network ports of an 8x8 HyperX


def test_the_report_is_one_self_contained_page(study_dir):
    page = xs.write_report(study_dir).read_text()
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 3
    for data in images:
        assert base64.b64decode(data)[:4] == b"\x89PNG"
    assert "<script" not in page and "http://" not in page and "https://" not in page
    assert "000-dor-uniform" in page and "routing.algorithm" in page
    assert "[grid]" in page  # the study file is shown
    # It opens with the verdict: per pattern, the best routing by saturation throughput
    # and by latency at a named load.
    assert page.index("<h2>Verdict</h2>") < page.index("<h2>Latency and throughput</h2>")
    verdict = page[page.index("<h2>Verdict</h2>"):page.index("<h2>Latency and throughput</h2>")]
    for text in ["best by saturation throughput", "best by latency", "tornado", "uniform", "cycles at load"]:
        assert text in verdict, text


def test_a_folder_that_is_not_a_study_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a study folder"):
        xs.read_study(tmp_path)


FAULT_STUDY = """
[study]
base = "base-config.toml"
loads = [0.2, 0.5, 0.8]
[set]
"simulation.cycles" = 1500
"simulation.warmup" = 500
"router.vcs" = 3
"routing.algorithm" = "minimal"
[grid]
"topology.failed_links" = [0, 20]
"""


def test_fault_scaling_and_completion_plots_render(study_dir, tmp_path):
    import shutil
    import subprocess

    from conftest import ROOT, xnet_binary

    shutil.copy(ROOT / "configs" / "quick.toml", tmp_path / "base-config.toml")
    (tmp_path / "faults.toml").write_text(FAULT_STUDY)
    out = subprocess.run([str(xnet_binary()), "study", "faults.toml", "-q", "--dir", "f"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    df = xs.read_study(tmp_path / "f")
    assert sorted(df["topology.failed_links"].unique()) == [0, 20]
    fig = xs.plot_fault_throughput(df)
    (line,) = fig.axes[0].lines
    assert list(line.get_xdata()) == [0, 20]
    xs.save(fig, tmp_path / "faults")
    xs.save(xs.plot_scaling(xs.read_study(study_dir)), tmp_path / "scaling")
    # A workload run: completion times per rank.
    work = tmp_path / "w.h5"
    out = subprocess.run([str(xnet_binary()), "run", str(ROOT / "configs" / "workload-stencil.toml"),
                          "-q", "-t", "1", "-o", str(work)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    fig = xs.plot_completion(work)
    assert len(fig.axes[0].lines) == 2  # the stencil and the all-to-all job
    jobs = xs.read_jobs(work)
    assert list(jobs["name"]) == ["stencil", "fft"] and list(jobs["kind"]) == ["stencil3d", "alltoall"]
    # On an ideal network the stencil takes its computation, 10 x 1000 cycles, and the
    # all-to-all no time (so it has no slowdown); the network slows the stencil down.
    assert list(jobs["ideal_time"]) == [10_000, 0]
    assert jobs["slowdown"][0] > 1 and np.isnan(jobs["slowdown"][1])
    # The load point's row carries each job's figures.
    row = xs.read_run(work).iloc[0]
    assert row["completion_time.stencil"] == jobs["completion_time"][0]
    assert row["slowdown.stencil"] == jobs["slowdown"][0] and np.isnan(row["slowdown.fft"])
    # A sweep's jobs come from every point, with the point and its load (point 0 only
    # was returned, silently).
    sweep = tmp_path / "sweep.h5"
    out = subprocess.run([str(xnet_binary()), "sweep", str(ROOT / "configs" / "workload-stencil.toml"),
                          "-q", "-t", "1", "--loads", "0,0.2", "-o", str(sweep)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    swept = xs.read_jobs(sweep)
    assert list(swept["point"]) == [0, 0, 1, 1] and list(swept["load"]) == [0.0, 0.0, 0.2, 0.2]
    assert list(swept["name"]) == ["stencil", "fft"] * 2
    assert list(xs.read_jobs(sweep, point=1)["completion_time"]) == list(swept["completion_time"][2:])
    ranks = xs.read_ranks(work, job=0)
    assert len(ranks) == 512 and (ranks["finished"] == 1).all()
    assert (ranks["computing"] + ranks["sending"] + ranks["waiting"] == ranks["finish"]).all()
    xs.save(fig, tmp_path / "completion")


def _run(tmp_path, text):
    """`xnet run` of the configuration `text` on one thread: its output and result file."""
    import subprocess

    from conftest import xnet_binary

    config = tmp_path / "run.toml"
    config.write_text(text)
    out_file = tmp_path / "run.h5"
    out = subprocess.run([str(xnet_binary()), "run", str(config), "-t", "1", "-o", str(out_file)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out, out_file


def test_collectives_are_timed_with_nccl_tests_bandwidths(tmp_path):
    out, out_file = _run(
        tmp_path,
        '[simulation]\ncycles = 400000\n[topology]\nkind = "hyperx"\nsides = [4]\n'
        'endpoints_per_switch = 2\n[router]\nvcs = 2\n[routing]\nalgorithm = "minimal"\n'
        '[workload]\n[[workload.jobs]]\nkind = "collectives"\nranks = 8\niterations = 2\n'
        'operations = [{collective = "allreduce", bytes = 65536, library = "nccl"}, '
        '{collective = "alltoall", bytes = 512}]\n'
    )
    assert "busbw.GB/s" in out.stdout and "alltoall" in out.stdout
    c = xs.read_collectives(out_file)
    assert list(c["collective"]) == ["allreduce", "alltoall"] * 2
    assert list(c["iteration"]) == [0, 0, 1, 1] and (c["parts"] == 8).all()
    # nccl-tests' sizes: the all-reduce's buffer, the all-to-all's 8 x 512 per rank.
    assert list(c["bytes"]) == [65536, 4096] * 2
    assert np.allclose(c["time_ns"], (c["end"] - c["start"]) * 0.64)
    assert np.allclose(c["algbw_gbs"], c["bytes"] / c["time_ns"])
    assert np.allclose(c["busbw_gbs"] / c["algbw_gbs"], [1.75, 0.875] * 2)
    # A collective's first member starts once it has ended the previous one: after the
    # previous collective's first end, before its last.
    assert (c["start"].iloc[1:].values > c["start"].iloc[:-1].values).all()
    assert (c["start"].iloc[1:].values <= c["end"].iloc[:-1].values).all()


def test_a_training_step_reads_as_steps_and_collectives(tmp_path):
    out, out_file = _run(
        tmp_path,
        '[simulation]\ncycles = 20000000\n[topology]\nkind = "hyperx"\nsides = [4]\n'
        'endpoints_per_switch = 2\n[router]\nvcs = 2\n[routing]\nalgorithm = "minimal"\n'
        '[workload]\n[[workload.jobs]]\nkind = "training"\nlayers = 4\nhidden = 256\nheads = 4\n'
        'sequence = 128\nvocabulary = 1000\nglobal_batch = 8\ntensor = 2\npipeline = 2\ndata = 2\n'
        'gpu_tflops = 10\niterations = 2\n'
    )
    assert "exposed.ms" in out.stdout and "tensor allreduce" in out.stdout
    steps = xs.read_steps(out_file)
    jobs = xs.read_jobs(out_file)
    assert list(steps["iteration"]) == [0, 1]
    assert np.isclose(steps["time_ns"].sum(), jobs["completion_time"].iloc[0] * 0.64)
    assert np.allclose(steps["exposed_ns"], steps["time_ns"] - steps["compute_max_ns"])
    assert (steps["compute_mean_ns"] < steps["compute_max_ns"]).all()
    c = xs.read_collectives(out_file)
    assert set(c["collective"]) == {"tensor allreduce", "data allreduce"}
    assert (c["parts"] == 2).all()


def test_recorded_sends_read_as_flow_completion_times(tmp_path):
    # Rank 0 sends 3 packets' worth to rank 1 and one to rank 2; the sends table holds
    # both, and each send's end is its rank's last op.
    goal = (
        "num_ranks 3\nrank 0 {\na: send 768b to 1 tag 1\nb: send 256b to 2 tag 2\n}\n"
        "rank 1 {\nr: recv 768b from 0 tag 1\n}\nrank 2 {\nr: recv 256b from 0 tag 2\n}\n"
    )
    _, out_file = _run(
        tmp_path,
        '[simulation]\ncycles = 100000\n[topology]\nkind = "hyperx"\nsides = [4]\n'
        'endpoints_per_switch = 1\n[router]\nvcs = 1\n[routing]\nalgorithm = "minimal"\n'
        f'[workload]\nrecord_sends = true\n[[workload.jobs]]\nkind = "goal"\ncontents = """\n{goal}"""\n',
    )
    sends = xs.read_sends(out_file)
    assert list(sends["rank"]) == [0, 0] and sorted(sends["to"]) == [1, 2]
    assert sorted(sends["bytes"]) == [256, 768]
    assert (sends["start"] == 0).all() and (sends["end"] > 0).all()
    assert np.allclose(sends["time_ns"], (sends["end"] - sends["start"]) * 0.64)
    ranks = xs.read_ranks(out_file)
    assert sends["end"].max() == ranks["finish"].iloc[0]


def test_the_report_shows_the_start_of_file_texts_only():
    from xnet_study.report import _without_file_texts

    fabric = "".join(f"s{i} s{i + 1}\n" for i in range(1000))
    base = f'[topology]\nkind = "file"\ncontents = """\n{fabric}"""\n\n[router]\nvcs = 2\n'
    shown = _without_file_texts(base)
    assert "s0 s1\ns1 s2\ns2 s3\n... (997 more lines)\n" in shown
    assert "s500 s501" not in shown
    assert shown.endswith('"""\n\n[router]\nvcs = 2\n')
    # Short strings and other keys are left alone.
    assert _without_file_texts('contents = """a b"""\nx = 1\n') == 'contents = """a b"""\nx = 1\n'


def test_show_prints_a_result_file(study_dir, capsys):
    from xnet_study.__main__ import main

    run = sorted((study_dir / "runs").glob("*.h5"))[0]
    assert main(["show", str(run)]) == 0
    text = capsys.readouterr().out
    assert "status      completed" in text and "accepted_load" in text
    assert "point 000: load 0.1" in text and "last of" in text


def test_show_refuses_a_file_that_is_not_a_result(tmp_path, capsys):
    from xnet_study.__main__ import main

    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f.attrs["x"] = 1
    (tmp_path / "junk.h5").write_text("not HDF5")
    for name in ["plain.h5", "junk.h5", "missing.h5"]:
        assert main(["show", str(tmp_path / name)]) == 1
        assert "error:" in capsys.readouterr().err


def test_the_summary_gives_the_saturation_load_and_the_plateau(study_dir):
    from xnet_study.report import summary_table

    table = summary_table(xs.read_study(study_dir), ["routing.algorithm", "traffic.pattern"]).set_index("run")
    dor = table.loc["001-dor-tornado"]
    # DOR under tornado saturates between 0.1 and 0.4 and then carries its 1/8 plateau,
    # which the steady points alone (0.1) do not show.
    assert dor["saturation load"] == "0.25 (0.1-0.4)"
    assert 0.12 < dor["saturation throughput"] <= 0.126 and dor["max steady accepted"] < 0.11
    # The file's record of the bracket is in the table too, and agrees.
    runs = xs.read_study(study_dir)
    row = runs[runs["run"] == "001-dor-tornado"].iloc[0]
    assert (row["saturation_search"], row["saturation_low"], row["saturation_high"]) == ("grid", 0.1, 0.4)
    # A run whose points never saturate says so instead of NaN.
    never = xs.read_study(study_dir)
    never = never[never["run"] == "000-dor-uniform"].assign(saturated=False)
    assert summary_table(never, [])["saturation load"].iloc[0] == "> 0.9 (not reached)"


def _runs(curves):
    """A study table from {(routing, pattern): [(load, accepted, latency, saturated)]}."""
    import pandas as pd

    rows = []
    for (routing, pattern), points in curves.items():
        for load, accepted, latency, saturated in points:
            rows.append({"run": f"{routing}-{pattern}", "routing.algorithm": routing, "traffic.pattern": pattern,
                         "load": load, "offered_load": load, "accepted_load": accepted,
                         "latency_mean": latency, "latency_p50": latency, "latency_p99": 2 * latency,
                         "saturated": saturated})
    return pd.DataFrame(rows)


def test_the_verdict_names_the_best_routing_per_pattern_and_its_ties():
    from xnet_study.verdict import saturation, verdict

    runs = _runs({
        ("a", "uniform"): [(0.2, 0.2, 30, False), (0.4, 0.4, 40, False), (0.6, 0.45, 900, True)],
        ("b", "uniform"): [(0.2, 0.2, 25, False), (0.4, 0.4, 39.5, False), (0.6, 0.448, 800, True)],
        ("c", "uniform"): [(0.2, 0.2, 35, False), (0.4, 0.3, 500, True), (0.6, 0.3, 900, True)],
        ("a", "tornado"): [(0.2, 0.2, 30, False), (0.4, 0.4, 35, False), (0.6, 0.6, 50, False)],
        ("b", "tornado"): [(0.2, 0.12, 300, True), (0.4, 0.125, 900, True), (0.6, 0.125, 999, True)],
        ("c", "tornado"): [(0.2, 0.2, 40, False), (0.4, 0.25, 600, True), (0.6, 0.25, 950, True)],
    })
    assert saturation(runs[runs["run"] == "c-uniform"]) == {
        "reached": True, "low": 0.2, "high": 0.4, "load": pytest.approx(0.3), "throughput": 0.3}
    v = verdict(runs, ["routing.algorithm", "traffic.pattern"]).set_index("traffic.pattern")
    # Uniform: a and b carry 0.45 and 0.448 (a tie within 2 %); at 0.2, the highest load
    # all three ran unsaturated, b is fastest and a is 20 % slower: no tie.
    assert v.loc["uniform", "best by saturation throughput"] == "a"
    assert v.loc["uniform", "ties (throughput)"] == "b"
    assert v.loc["uniform", "best by latency"] == "b" and v.loc["uniform", "ties (latency)"] == "none"
    assert v.loc["uniform", "latency"] == "25 cycles at load 0.2"
    # Tornado: a never saturates, so its throughput is a lower bound; b saturates at once,
    # so latencies are compared at the lowest load.
    assert v.loc["tornado", "best by saturation throughput"] == "a"
    assert v.loc["tornado", "throughput"] == "at least 0.6: not saturated up to load 0.6"
    assert v.loc["tornado", "best by latency"] == "a" and v.loc["tornado", "latency"] == "30 cycles at load 0.2"


def test_coinciding_curves_stay_visible_and_are_named():
    runs = _runs({
        ("a", "uniform"): [(0.2, 0.2, 30, False), (0.4, 0.4, 40, False)],
        ("b", "uniform"): [(0.2, 0.2, 30, False), (0.4, 0.4, 40.1, False)],
        ("c", "uniform"): [(0.2, 0.2, 50, False), (0.4, 0.35, 60, False)],
    })
    for plot in (xs.plot_latency, xs.plot_throughput, xs.plot_percentiles):
        fig = plot(runs, by="routing.algorithm")
        ax = fig.axes[0]
        drawn = [line for line in ax.lines if line.get_linestyle() != "None" and line.get_label() != "_child0"]
        markers = {(line.get_marker(), line.get_markersize()) for line in drawn if line.get_xdata().size > 1}
        # Every curve has a marker of its own look, so a and b show both.
        assert len(markers) >= 3, plot.__name__
        notes = [t.get_text() for t in ax.texts]
        assert "coincide: a = b" in notes, (plot.__name__, notes)
