"""Plots of xnet results (matplotlib; each function returns a Figure).

Saturated load points (the source queues still growing at the end: the run's
``saturated`` column) are drawn as hollow markers and not joined by the line: their
latency is a lower bound that grows with the run's length, not a steady-state value.
Each curve has its own marker and dashes, markers shrink from the first curve to the last,
and a panel names the curves whose points coincide, so that no curve hides behind another.
"""

from __future__ import annotations

import tomllib

import matplotlib

matplotlib.use("Agg")  # files only: no display needed (servers, CI)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .read import _open, _text, read_links, read_timeseries  # noqa: E402


def _groups(df: pd.DataFrame, by):
    """(label, rows) per value of `by` (a column or list of columns), or one group."""
    if by is None:
        return [("", df)]
    cols = [by] if isinstance(by, str) else list(by)
    out = []
    for key, rows in df.groupby(cols, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        out.append((", ".join(str(k) for k in key), rows))
    return out


def _saturated(rows: pd.DataFrame):
    """The rows' `saturated` column as booleans (all False when the table has none)."""
    return rows["saturated"].astype(bool) if "saturated" in rows else pd.Series(False, index=rows.index)


def _facets(df: pd.DataFrame, facet):
    if facet is None:
        return [("", df)]
    return [(f"{facet} = {k}", rows) for k, rows in df.groupby(facet, sort=False)]


# One marker and dash pattern per curve, and marker sizes that shrink from the first curve
# to the last, so that curves lying on each other still show every marker.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DASHES = ("-", "--", "-.", ":")


def _style(i: int, n: int) -> dict:
    """The look of curve `i` of `n`: its marker, dashes and size."""
    return {"marker": MARKERS[i % len(MARKERS)], "ls": DASHES[i % len(DASHES)],
            "ms": 3 + 2.5 * (n - 1 - i) / max(n - 1, 1) * 2}


def coinciding(curves, rel=0.01):
    """Groups of curve labels whose points coincide: `curves` is [(label, xs, ys)]; two
    curves coincide when they have the same x values and every y is within `rel` of the
    other's."""
    groups = []
    for label, xs, ys in curves:
        for g in groups:
            _, gx, gy = g[0]
            if len(gx) == len(xs) and len(xs) and np.allclose(gx, xs, rtol=1e-9) and \
                    np.allclose(gy, ys, rtol=rel, atol=0):
                g.append((label, xs, ys))
                break
        else:
            groups.append([(label, xs, ys)])
    return [[c[0] for c in g] for g in groups if len(g) > 1]


def _note_coinciding(ax, curves):
    """Says in the panel which curves lie on each other (they are drawn, one over the other)."""
    same = coinciding(curves)
    if same:
        text = "coincide: " + "; ".join(" = ".join(str(label) for label in g) for g in same)
        ax.text(0.01, 0.99, text, transform=ax.transAxes, ha="left", va="top", fontsize=7, color="0.3")


def _legend_beside(axes, title, fontsize):
    """One legend for every panel's curves, beside the last panel: inside a panel it covered
    curves (the tornado's, where they run high)."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    if entries:
        axes[-1].legend(entries.values(), entries.keys(), title=title, fontsize=fontsize,
                        loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)


def _curves(df, x, y, by, facet, xlabel, ylabel, title, diagonal=False, logy=False):
    facets = _facets(df, facet)
    fig, axes = plt.subplots(1, len(facets), figsize=(5.2 * len(facets), 4.2), squeeze=False)
    for ax, (ftitle, fdf) in zip(axes[0], facets):
        groups = _groups(fdf, by)
        curves = []
        for i, (label, rows) in enumerate(groups):
            rows = rows.sort_values(x)
            sat = _saturated(rows)
            ok = rows[~sat]
            style = _style(i, len(groups))
            (line,) = ax.plot(ok[x], ok[y], label=label or None, **style)
            if sat.any():
                bad = rows[sat]
                ax.plot(bad[x], bad[y], ls="none", marker=style["marker"], ms=style["ms"] + 2, mfc="none",
                        color=line.get_color())
            curves.append((label, rows[x].to_numpy(float), rows[y].to_numpy(float)))
        if by is not None:
            _note_coinciding(ax, curves)
        if diagonal:
            lim = max(df[x].max(), df[y].max())
            ax.plot([0, lim], [0, lim], color="0.7", lw=0.8, ls="--", zorder=0)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(ftitle or title)
        ax.grid(alpha=0.3)
    if by is not None:
        _legend_beside(axes[0], by if isinstance(by, str) else ", ".join(by), 8)
    fig.text(0.99, 0.01, "hollow: saturated (not steady)", ha="right", fontsize=7, color="0.4")
    fig.tight_layout()
    return fig


def plot_latency(df, by=None, facet=None, y="latency_mean"):
    """Latency against accepted load, one curve per value of `by`, one panel per value of
    `facet` (the classic latency-throughput figure)."""
    return _curves(df, "accepted_load", y, by, facet, "accepted load (phits/cycle/endpoint)",
                   f"{y.replace('_', ' ')} (cycles)", "latency", logy=True)


def plot_throughput(df, by=None, facet=None):
    """Accepted against offered load; the diagonal is what an ideal network accepts."""
    return _curves(df, "offered_load", "accepted_load", by, facet, "offered load (phits/cycle/endpoint)",
                   "accepted load (phits/cycle/endpoint)", "throughput", diagonal=True)


def plot_percentiles(df, by=None, facet=None):
    """Median and 99th-percentile latency against offered load (saturated points hollow)."""
    facets = _facets(df, facet)
    fig, axes = plt.subplots(1, len(facets), figsize=(5.2 * len(facets), 4.2), squeeze=False)
    for ax, (ftitle, fdf) in zip(axes[0], facets):
        groups = _groups(fdf, by)
        curves = []
        for i, (label, rows) in enumerate(groups):
            rows = rows.sort_values("offered_load")
            sat = _saturated(rows)
            ok, bad = rows[~sat], rows[sat]
            ms = _style(i, len(groups))["ms"]
            (line,) = ax.plot(ok["offered_load"], ok["latency_p50"], marker="o", ms=ms,
                              label=f"{label} p50".strip())
            ax.plot(ok["offered_load"], ok["latency_p99"], marker="^", ms=ms, ls="--",
                    color=line.get_color(), label=f"{label} p99".strip())
            curves.append((label, rows["offered_load"].to_numpy(float),
                           np.concatenate([rows["latency_p50"].to_numpy(float), rows["latency_p99"].to_numpy(float)])))
            for column, marker in (("latency_p50", "o"), ("latency_p99", "^")):
                ax.plot(bad["offered_load"], bad[column], ls="none", marker=marker, ms=5, mfc="none",
                        color=line.get_color())
        if by is not None:
            _note_coinciding(ax, curves)
        ax.set_yscale("log")
        ax.set_xlabel("offered load (phits/cycle/endpoint)")
        ax.set_ylabel("latency (cycles)")
        ax.set_title(ftitle or "latency percentiles")
        ax.grid(alpha=0.3)
    _legend_beside(axes[0], None, 7)
    fig.tight_layout()
    return fig


def plot_timeseries(path, point=0, column="accepted_load"):
    """One column of a load point's time series against time."""
    ts = read_timeseries(path, point)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(ts["time"], ts[column], marker=".")
    ax.set_xlabel("cycle")
    ax.set_ylabel(column.replace("_", " "))
    ax.set_title(f"load {ts['load'].iloc[0]:g}")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _sides(path):
    with _open(path) as f:
        config = tomllib.loads(_text(f.attrs["config"]))
    topo = config.get("topology", {})
    if topo.get("kind") not in ("hyperx", "torus", "mesh"):
        raise ValueError(f"a link heat map needs a HyperX, torus or mesh, not {topo.get('kind')!r}")
    return list(topo["sides"])


def plot_link_heatmap(path, point=0):
    """Mean utilisation of each switch's outgoing network links, on the grid of the first
    two coordinates of a HyperX, torus or mesh (averaged over further dimensions)."""
    sides = _sides(path)
    links = read_links(path, point)
    per_switch = links.groupby("switch")["utilisation"].mean()
    grid = np.zeros(int(np.prod(sides)))
    grid[per_switch.index.to_numpy()] = per_switch.to_numpy()
    a = sides[0]
    b = sides[1] if len(sides) > 1 else 1
    grid = grid.reshape(-1, b, a).mean(axis=0)  # switch id = x + a*y + a*b*z ...
    fig, ax = plt.subplots(figsize=(5, 4.2))
    im = ax.imshow(grid, origin="lower", cmap="viridis", vmin=0)
    fig.colorbar(im, ax=ax, label="mean link utilisation")
    ax.set_xlabel("coordinate 0")
    ax.set_ylabel("coordinate 1")
    ax.set_title("outgoing network links per switch")
    fig.tight_layout()
    return fig


def plot_vc_usage(path, point=0):
    """Phits carried on each VC of the switch-to-switch links."""
    with _open(path) as f:
        phits = f[f"points/{point:03d}/vc_phits"][:]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.bar(np.arange(len(phits)), phits / max(phits.sum(), 1))
    ax.set_xlabel("VC")
    ax.set_ylabel("share of phits")
    ax.set_title("VC usage")
    fig.tight_layout()
    return fig


def plot_completion(path, point=0):
    """Finish time of every rank of every job of a workload run (docs/output-format.md,
    the workload group)."""
    fig, ax = plt.subplots(figsize=(6, 3.5))
    with _open(path) as f:
        group = f[f"points/{point:03d}/workload"]
        names = _text(group.attrs["job_names"]).split(",")
        for k, name in enumerate(names):
            ranks = group[f"job_{k:03d}/ranks"][:]
            column = "finish" if "finish" in ranks.dtype.names else ranks.dtype.names[-1]
            ax.plot(np.sort(ranks[column]), np.linspace(0, 1, len(ranks)), label=name)
    ax.set_xlabel("finish time (cycles)")
    ax.set_ylabel("fraction of ranks done")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def save(fig, stem):
    """Saves `fig` as STEM.png and STEM.svg; returns the two paths."""
    paths = [f"{stem}.png", f"{stem}.svg"]
    for p in paths:
        fig.savefig(p, dpi=120)
    plt.close(fig)
    return paths


def plot_fault_throughput(df, faults="topology.failed_links", by=None):
    """The highest accepted load of the points that were not saturated (the throughput a
    network sustains) against the number of failed links, one curve per value of `by`.
    `df` is a study table whose grid varies `faults`."""
    rows = []
    for keys, g in df.groupby([faults] + ([by] if by else []), sort=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        steady = g[~_saturated(g)]
        rows.append((*keys, steady["accepted_load"].max() if len(steady) else np.nan))
    table = pd.DataFrame(rows, columns=[faults] + ([by] if by else []) + ["throughput"])
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for label, g in _groups(table, by):
        ax.plot(g[faults], g["throughput"], marker="o", label=label or None)
    ax.set_xlabel(faults)
    ax.set_ylabel("max steady accepted load (phits/cycle/endpoint)")
    ax.set_title("throughput under faults")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    if by:
        ax.legend(title=by, fontsize=8)
    fig.tight_layout()
    return fig


def plot_scaling(df):
    """Strong scaling: speedup and parallel efficiency against ranks x threads, from a
    table with one row per run of the same problem (columns `wall_seconds`, `ranks`,
    `threads`, as `read_run` gives; one row per file is enough)."""
    runs = df.drop_duplicates("file") if "file" in df else df
    runs = runs.assign(cores=runs["ranks"] * runs["threads"]).sort_values("cores")
    base = runs.iloc[0]
    speedup = base["wall_seconds"] * base["cores"] / runs["wall_seconds"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    a.plot(runs["cores"], speedup, marker="o", label="measured")
    a.plot(runs["cores"], runs["cores"], ls="--", color="0.6", label="ideal")
    a.set_xlabel("ranks x threads")
    a.set_ylabel(f"speedup (over {int(base['cores'])} core(s), scaled)")
    a.legend()
    b.plot(runs["cores"], speedup / runs["cores"], marker="o")
    b.set_xlabel("ranks x threads")
    b.set_ylabel("parallel efficiency")
    b.set_ylim(0, 1.1)
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
