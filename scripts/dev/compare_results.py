#!/usr/bin/env python3
"""Compare two xnet result files dataset by dataset.

    scripts/dev/compare_results.py [--common] A.h5 B.h5

Prints every difference and exits 1 if there is one, 0 if the two files hold the same
datasets (byte for byte) and the same attributes, apart from the attributes that record
the environment or wall-clock time (docs/output-format.md lists them). Use it to check
that a run is reproducible, that thread and rank counts do not change results, or that a
change to xnet that should not change the model does not.

With --common, what only one file has (attributes, datasets, the columns of a table) is
listed but is no difference, and tables are compared column by column on the columns both
have: for a build that adds figures and must leave the others unchanged.
"""

import sys

import h5py
import numpy as np

ENVIRONMENT = {
    "threads", "partitions", "lookahead", "wall_seconds", "windows", "command",
    "routing_build_seconds", "peak_rss_bytes", "memory_estimate_bytes", "packet_hops_per_second", "ranks",
}


def environment(name):
    return name in ENVIRONMENT or name.startswith("partition_") or name.startswith("rank_")


def collect(path):
    datasets, attrs = {}, {}

    def visit(name, obj):
        for key, value in obj.attrs.items():
            attrs[f"{name}@{key}"] = value
        if isinstance(obj, h5py.Dataset):
            datasets[name] = obj[()]

    with h5py.File(path, "r") as f:
        for key, value in f.attrs.items():
            attrs[f"/@{key}"] = value
        f.visititems(visit)
    return datasets, attrs


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def common_columns(a, b):
    """`a` and `b` (tables) reduced to the columns both have, and the columns only one has."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.names is None or b.dtype.names is None:
        return a, b, []
    both = [n for n in a.dtype.names if n in b.dtype.names]
    only = [n for n in a.dtype.names + b.dtype.names if n not in both]
    if not both or a.shape != b.shape:
        return a, b, only
    pick = lambda t: np.array([tuple(row) for row in t[both]], dtype=[(n, t.dtype[n]) for n in both])
    return pick(a), pick(b), only


def main():
    args = sys.argv[1:]
    common = "--common" in args
    args = [a for a in args if a != "--common"]
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    (da, aa), (db, ab) = collect(args[0]), collect(args[1])
    diffs, added = [], []
    for name in sorted(set(da) | set(db)):
        if name not in da or name not in db:
            (added if common else diffs).append(f"dataset {name}: only in {'A' if name in da else 'B'}")
            continue
        a, b = da[name], db[name]
        if common:
            a, b, only = common_columns(a, b)
            added += [f"column {name}.{c}" for c in only]
        if not same(a, b):
            diffs.append(f"dataset {name}: differs")
    for key in sorted(set(aa) | set(ab)):
        if environment(key.rsplit("@", 1)[1]):
            continue
        if key not in aa or key not in ab:
            (added if common else diffs).append(f"attribute {key}: only in {'A' if key in aa else 'B'}")
        elif not same(aa[key], ab[key]):
            diffs.append(f"attribute {key}: {aa[key]!r} vs {ab[key]!r}")
    for d in diffs:
        print(d)
    if not diffs:
        extra = f"; in one file only: {len(added)} ({', '.join(added[:3])}{', ...' if len(added) > 3 else ''})" if added else ""
        print(f"identical: {len(da)} datasets, {len(aa)} attributes (environment attributes aside){extra}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
