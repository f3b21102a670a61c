#!/usr/bin/env python3
"""Compare two xnet result files dataset by dataset.

    scripts/dev/compare_results.py A.h5 B.h5

Prints every difference and exits 1 if there is one, 0 if the two files hold the same
datasets (byte for byte) and the same attributes, apart from the attributes that record
the environment or wall-clock time (docs/output-format.md lists them). Use it to check
that a run is reproducible, that thread and rank counts do not change results, or that a
change to xnet that should not change the model does not.
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


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    (da, aa), (db, ab) = collect(sys.argv[1]), collect(sys.argv[2])
    diffs = []
    for name in sorted(set(da) | set(db)):
        if name not in da or name not in db:
            diffs.append(f"dataset {name}: only in {'A' if name in da else 'B'}")
        elif not same(da[name], db[name]):
            diffs.append(f"dataset {name}: differs")
    for key in sorted(set(aa) | set(ab)):
        if environment(key.rsplit("@", 1)[1]):
            continue
        if key not in aa or key not in ab:
            diffs.append(f"attribute {key}: only in {'A' if key in aa else 'B'}")
        elif not same(aa[key], ab[key]):
            diffs.append(f"attribute {key}: {aa[key]!r} vs {ab[key]!r}")
    for d in diffs:
        print(d)
    if not diffs:
        print(f"identical: {len(da)} datasets, {len(aa)} attributes (environment attributes aside)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
