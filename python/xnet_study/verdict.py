"""What a study's reader wants first: each run's saturation load and throughput, and per
traffic pattern (per combination of the other grid keys) the best routing by saturation
throughput and by latency at a named load, with the routings that tie."""

from __future__ import annotations

import math

import pandas as pd

# Two throughputs within this share of the larger one tie (the noise of a short run and,
# for the saturation load, the bracket's width are of this order).
THROUGHPUT_TIE = 0.02
# Two mean latencies within this share of the smaller one tie.
LATENCY_TIE = 0.02


def saturation(rows: pd.DataFrame) -> dict:
    """The saturation of one run from its points: `low`, the highest load below the first
    saturated one that did not saturate (0 when none did), `high`, that first saturated
    load (NaN when no point saturated: `reached` is False and the saturation load is above
    `low`), `load`, the bracket's middle, and `throughput`, the highest accepted load of
    any point (past saturation the accepted load is the network's plateau)."""
    sat = rows["saturated"].astype(bool)
    high = float(rows.loc[sat, "load"].min()) if sat.any() else math.nan
    below = rows.loc[~sat & ((rows["load"] < high) if sat.any() else True), "load"]
    low = float(below.max()) if len(below) else 0.0
    return {
        "reached": bool(sat.any()),
        "low": low,
        "high": high,
        "load": (low + high) / 2 if sat.any() else math.nan,
        "throughput": float(rows["accepted_load"].max()) if len(rows) else math.nan,
    }


def describe_saturation(s: dict) -> str:
    """A run's saturation load in words: `0.45 (0.44-0.46)`, or `> 0.9 (not reached)`."""
    if not s["reached"]:
        return f"> {s['low']:.4g} (not reached)"
    return f"{s['load']:.4g} ({s['low']:.4g}-{s['high']:.4g})"


def _routing_key(keys):
    """The grid key that names the routing (the first key when none does)."""
    for k in keys:
        if k.startswith("routing."):
            return k
    return keys[0] if keys else None


def _named_load(group: pd.DataFrame, by: str) -> float | None:
    """The load to compare latencies at: the highest load every routing of the group ran
    without saturating, else the lowest load they all ran."""
    runs = [rows for _, rows in group.groupby(by, sort=False)]
    common = set.intersection(*(set(r["load"]) for r in runs)) if runs else set()
    if not common:
        return None
    steady = [load for load in common
              if all(not r.loc[r["load"] == load, "saturated"].astype(bool).any() for r in runs)]
    return max(steady) if steady else min(common)


def _best(values: dict, tie: float, higher: bool):
    """The best key of `values` (NaN left out) and every key within `tie` of it."""
    values = {k: v for k, v in values.items() if not math.isnan(v)}
    if not values:
        return None, []
    best = (max if higher else min)(values, key=values.get)
    scale = abs(values[best]) or 1.0
    ties = [k for k, v in values.items() if k != best and abs(v - values[best]) <= tie * scale]
    return best, ties


def verdict(runs: pd.DataFrame, keys) -> pd.DataFrame:
    """One row per traffic pattern (per combination of the grid keys other than the
    routing's): the routing with the highest saturation throughput and those that tie with
    it (within THROUGHPUT_TIE), and the routing with the lowest mean latency at a named load
    (the highest load all of them ran unsaturated) and those that tie (within LATENCY_TIE).
    Throughputs of runs that never saturated are lower bounds, marked `>=`."""
    keys = list(keys)
    by = _routing_key(keys)
    if by is None or by not in runs:
        return pd.DataFrame()
    others = [k for k in keys if k != by]
    groups = runs.groupby(others, sort=False) if others else [((), runs)]
    out = []
    for context, group in groups:
        context = context if isinstance(context, tuple) else (context,)
        sat = {str(k): saturation(r) for k, r in group.groupby(by, sort=False)}
        best_t, ties_t = _best({k: s["throughput"] for k, s in sat.items()}, THROUGHPUT_TIE, higher=True)
        at = _named_load(group, by)
        lat = {}
        if at is not None:
            for k, r in group.groupby(by, sort=False):
                lat[str(k)] = float(r.loc[r["load"] == at, "latency_mean"].iloc[0])
        best_l, ties_l = _best(lat, LATENCY_TIE, higher=False)
        row = dict(zip(others, context))
        if best_t is not None:
            s = sat[best_t]
            row["best by saturation throughput"] = best_t
            if s["reached"]:
                row["throughput"] = f"{s['throughput']:.4g} at saturation load {describe_saturation(s)}"
            else:
                # Never saturated: what it carried is a lower bound, at the highest load run.
                row["throughput"] = f"at least {s['throughput']:.4g}: not saturated up to load {s['low']:.4g}"
            row["ties (throughput)"] = ", ".join(ties_t) or "none"
        if best_l is not None:
            row["best by latency"] = best_l
            row["latency"] = f"{lat[best_l]:.4g} cycles at load {at:g}"
            row["ties (latency)"] = ", ".join(ties_l) or "none"
        out.append(row)
    return pd.DataFrame(out)
