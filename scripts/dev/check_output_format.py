#!/usr/bin/env python3
"""Checks result files against docs/output-format.md, both ways.

    scripts/dev/check_output_format.py docs/output-format.md RESULT.h5 [RESULT.h5 ...]

For every documented attribute and table column it checks the type the file really has,
and it lists what a file holds that the document does not describe. Prints one line per
difference and exits 1 if there is any (0 otherwise). The integration tests run it on
fresh result files, so the document cannot drift from the writer.
"""

import re
import sys

import h5py
import numpy as np

SCALARS = {
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "i64": np.int64, "f64": np.float64,
}


def parse(doc_path):
    """{(kind, location): {name: type}}: kind is "attrs" or "table"; location the
    group or dataset path with NNN for a point."""
    sections = {}
    current = []
    summary_order = []
    for line in open(doc_path, encoding="utf-8"):
        line = line.rstrip("\n")
        heading = re.match(r"^(#+) (.*)$", line)
        if heading:
            title = heading.group(2)
            if title == "Root attributes":
                current = [("attrs", "/")]
            elif title == "`/summary`":
                current = [("table", "summary")]
            elif title == "Attributes" and heading.group(1) == "###" or title.startswith("Attributes of a "):
                # A point's attributes, and those some points add (completion-time runs).
                current = [("attrs", "points/NNN")]
            elif len(heading.group(1)) >= 3:
                # A point's tables; a group's own heading (`workload`, `workload/job_NNN`)
                # documents its attributes.
                names = re.findall(r"`([a-z_/N0-9]+)`", title)
                current = [("attrs" if n in GROUPS else "table", f"points/NNN/{n}") for n in names]
            else:
                current = []
            continue
        row = re.match(r"^\| (`[^|]*) \| ([a-z0-9\[\]]+) \|", line)
        if not row or not current:
            continue
        names_text, type_text = row.group(1), row.group(2)
        names = re.findall(r"`([a-z_0-9]+)`", names_text)
        if " ... " in names_text and len(names) == 2:
            first, last = names
            names = summary_order[summary_order.index(first):summary_order.index(last) + 1]
        for key in current:
            for name in names:
                sections.setdefault(key, {})[name] = type_text
                if key == ("table", "summary"):
                    summary_order.append(name)
    return sections


# Groups inside a point, as the document names them (job groups are numbered job_000, ...).
GROUPS = ("workload", "workload/job_NNN")


def kind_of(value):
    """The document's type word for an attribute value or a compound member dtype."""
    if isinstance(value, (bytes, str)):
        return "string"
    dtype = value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype
    if dtype.kind in ("O", "S", "U"):
        return "string"
    for word, scalar in SCALARS.items():
        if dtype == np.dtype(scalar):
            return word
    return str(dtype)


def check_attrs(where, obj, documented, problems):
    for name in obj.attrs:
        value = obj.attrs[name]
        if name not in documented:
            problems.append(f"{where}: attribute `{name}` is not documented")
            continue
        want = documented[name]
        base = want.split("[")[0]
        got = kind_of(value)
        is_array = np.ndim(value) > 0 and got != "string"
        if got != base:
            problems.append(f"{where}: attribute `{name}` is {got}, documented {want}")
        elif ("[" in want) != is_array:
            shape = "an array" if is_array else "a scalar"
            problems.append(f"{where}: attribute `{name}` is {shape}, documented {want}")


def check_table(where, dataset, documented, problems):
    names = dataset.dtype.names or ()
    for name in names:
        got = kind_of(np.zeros(1, dtype=dataset.dtype[name]))
        if name not in documented:
            problems.append(f"{where}: column `{name}` ({got}) is not documented")
        elif got != documented[name]:
            problems.append(f"{where}: column `{name}` is {got}, documented {documented[name]}")
    for name in documented:
        if name not in names:
            problems.append(f"{where}: documented column `{name}` is not in the file")


def check(sections, path):
    problems = []
    with h5py.File(path, "r") as f:
        check_attrs(f"{path} /", f, sections.get(("attrs", "/"), {}), problems)
        if "summary" in f:
            check_table(f"{path} /summary", f["summary"], sections[("table", "summary")], problems)
        else:
            # Absent until the first point ends; a finished point without it is a fault.
            for point in f.get("points", {}):
                if f["points"][point].attrs.get("status", b"running") not in (b"running", "running"):
                    problems.append(f"{path} /summary: missing, though point {point} finished")
        for point in f.get("points", {}):
            group = f["points"][point]
            check_attrs(f"{path} /points/{point}", group, sections.get(("attrs", "points/NNN"), {}), problems)
            check_group(f"{path} /points/{point}", group, "", sections, problems)
    return problems


def check_group(where, group, prefix, sections, problems):
    """Checks the tables and subgroups of a point's group `prefix` ("" for the point)."""
    for name, item in group.items():
        doc_name = prefix + re.sub(r"^job_\d{3}$", "job_NNN", name)
        if isinstance(item, h5py.Group):
            if doc_name not in GROUPS:
                problems.append(f"{where}/{name}: group not documented")
                continue
            check_attrs(f"{where}/{name}", item, sections.get(("attrs", f"points/NNN/{doc_name}"), {}), problems)
            check_group(f"{where}/{name}", item, doc_name + "/", sections, problems)
            continue
        key = ("table", f"points/NNN/{doc_name}")
        if item.dtype.names is None:
            if doc_name != "vc_phits" or kind_of(item[()]) != "u64":
                problems.append(f"{where}/{name}: undocumented or not a u64 array")
        elif key not in sections:
            problems.append(f"{where}/{name}: table not documented")
        else:
            check_table(f"{where}/{name}", item, sections[key], problems)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sections = parse(sys.argv[1])
    problems = [p for path in sys.argv[2:] for p in check(sections, path)]
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
