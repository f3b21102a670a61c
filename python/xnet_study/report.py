"""One self-contained HTML page per study: plots embedded as PNG (base64), the study and
base configurations, the runs' status and wall times, and a summary table. No scripts and
no external files, so it opens offline and can be mailed or archived as one file."""

from __future__ import annotations

import base64
import html
import io
import time
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from .plots import plot_latency, plot_percentiles, plot_throughput
from .read import read_study, study_status
from .verdict import LATENCY_TIE, THROUGHPUT_TIE, describe_saturation, saturation, verdict

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 75em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
pre { background: #f7f7f7; padding: 0.8em; font-size: 0.8em; overflow-x: auto; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.note { color: #666; font-size: 0.85em; }
"""


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _without_file_texts(text: str, keep: int = 3) -> str:
    """`text` (a configuration) with the file texts `xnet study` puts in (every key ending
    in `contents`: `contents`, `lfts_contents`, `sls_contents`, `mapping_contents`; a fabric
    may run to megabytes) cut to their first `keep` lines."""
    out, body = [], None  # body: the lines of a multi-line file text, while in one
    for line in text.splitlines():
        if body is not None:
            body.append(line)
            if line.rstrip().endswith('"""'):
                *inner, close = body
                out += inner[:keep]
                if len(inner) > keep:
                    out.append(f"... ({len(inner) - keep} more lines)")
                out.append(close)
                body = None
            continue
        key, _, value = line.partition("=")
        if key.strip().endswith("contents"):
            value = value.strip()
            if value.startswith('"""') and not value[3:].rstrip().endswith('"""'):
                body = []
            elif len(line) > 200:
                line = line[:200] + " ..."
        out.append(line)
    return "\n".join(out + (body or [])) + "\n"


def _table(df: pd.DataFrame, left=()) -> str:
    head = "".join(f'<th class="{"l" if c in left else ""}">{html.escape(str(c))}</th>' for c in df.columns)
    rows = []
    for _, r in df.iterrows():
        cells = []
        for c in df.columns:
            v = r[c]
            text = f"{v:.4g}" if isinstance(v, float) else str(v)
            cells.append(f'<td class="{"l" if c in left else ""}">{html.escape(text)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def summary_table(runs: pd.DataFrame, keys) -> pd.DataFrame:
    """Per run: the lowest load's latency, the saturation load (the bracket between the
    highest load that did not saturate and the first that did, or `> L (not reached)`),
    the saturation throughput (the highest accepted load of any point: past saturation the
    network's plateau) and the highest accepted load among the points that were not
    saturated."""
    out = []
    for name, rows in runs.groupby("run", sort=False):
        rows = rows.sort_values("load")
        steady = rows[~rows["saturated"].astype(bool)]
        sat = saturation(rows)
        out.append({
            "run": name,
            **{k: rows[k].iloc[0] for k in keys},
            "latency at lowest load": float(rows["latency_mean"].iloc[0]),
            "saturation load": describe_saturation(sat),
            "saturation throughput": sat["throughput"],
            "max steady accepted": float(steady["accepted_load"].max()) if len(steady) else float("nan"),
        })
    return pd.DataFrame(out)


def write_report(folder, output=None) -> Path:
    """Writes the study folder's report (default: FOLDER/report.html) and returns its path."""
    folder = Path(folder)
    output = Path(output) if output else folder / "report.html"
    status = study_status(folder)
    runs = read_study(folder)
    keys = list(runs.attrs.get("keys", []))
    name = runs.attrs.get("study", folder.name)
    by = keys[0] if keys else None
    facet = keys[1] if len(keys) > 1 else None
    parts = [f"<h1>Study {html.escape(str(name))}</h1>"]
    done = int((status["state"] == "done").sum())
    parts.append(
        f'<p>{done} of {len(status)} runs done; {len(runs)} load points. '
        f'Written {time.strftime("%Y-%m-%d %H:%M")} from the study folder {html.escape(folder.resolve().name)}.</p>'
    )
    if len(runs):
        best = verdict(runs, keys)
        if len(best):
            parts.append("<h2>Verdict</h2>")
            parts.append(
                '<p class="note">Per traffic pattern (each combination of the grid keys other '
                "than the routing): the routing with the highest saturation throughput (the "
                "highest accepted load of any point; <code>&gt;=</code> where no point saturated), "
                "and the one with the lowest mean latency at the named load (the highest load "
                "that every routing ran unsaturated). Routings within "
                f"{THROUGHPUT_TIE:.0%} of the best throughput, or {LATENCY_TIE:.0%} of the best "
                "latency, tie with it.</p>")
            parts.append(_table(best, left=tuple(best.columns)))
        parts.append("<h2>Latency and throughput</h2>")
        parts.append('<p class="note">Hollow markers are saturated points (source queues still '
                     "growing at the end): their latency is not a steady-state value. Each curve "
                     "has its own marker, markers shrink from the first curve to the last, and a "
                     "panel names the curves that coincide (drawn one over the other).</p>")
        for title, fig in (("latency against accepted load", plot_latency(runs, by=by, facet=facet)),
                           ("accepted against offered load", plot_throughput(runs, by=by, facet=facet)),
                           ("latency percentiles", plot_percentiles(runs, by=by, facet=facet))):
            parts.append(f'<img alt="{title}" src="data:image/png;base64,{_png(fig)}">')
        parts.append("<h2>Summary</h2>")
        parts.append(_table(summary_table(runs, keys), left=("run", *keys)))
    parts.append("<h2>Runs</h2>")
    parts.append(_table(status, left=("run", "state", "status", *keys)))
    for title, file in (("Study", "study.toml"), ("Base configuration", "base.toml")):
        path = folder / file
        if path.exists():
            text = _without_file_texts(path.read_text())
            parts.append(f"<h2>{title} ({file})</h2><pre>{html.escape(text)}</pre>")
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>xnet study {html.escape(str(name))}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>\n"
    )
    output.write_text(page)
    return output
