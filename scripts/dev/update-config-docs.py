#!/usr/bin/env python3
"""Rewrites the generated tables of docs/configuration.md from the registries.

    cargo build --release -p xnet && scripts/dev/update-config-docs.py [path/to/xnet]

Each block between `<!-- generated: NAME ... -->` and `<!-- end: NAME -->` is replaced by
the same block of `xnet list --markdown`; models/tests/registry.rs fails while they differ.
"""
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parents[2]
xnet = sys.argv[1] if len(sys.argv) > 1 else str(root / "target/release/xnet")
blocks = subprocess.run([xnet, "list", "--markdown"], check=True, capture_output=True, text=True).stdout
doc = root / "docs/configuration.md"
text = doc.read_text()
pattern = r"<!-- generated: (\S+) \(xnet list --markdown\) -->\n.*?<!-- end: \1 -->\n"
for block in re.finditer(pattern, blocks, re.S):
    tag = block.group(1)
    mine = r"<!-- generated: %s \(xnet list --markdown\) -->\n.*?<!-- end: %s -->\n" % (re.escape(tag), re.escape(tag))
    if not re.search(mine, text, re.S):
        sys.exit(f"docs/configuration.md has no generated block `{tag}`: add its markers where it belongs")
    text = re.sub(mine, lambda _: block.group(0), text, flags=re.S)
doc.write_text(text)
