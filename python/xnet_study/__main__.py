"""Command line: ``python -m xnet_study report|table|status FOLDER`` or ``show FILE`` (also
``xnet-study``)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from .read import read_study, study_status
from .report import write_report
from .show import show


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="xnet-study", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("report", help="write the study's self-contained HTML report")
    p.add_argument("folder")
    p.add_argument("-o", "--output", help="HTML file (default: FOLDER/report.html)")
    p = sub.add_parser("table", help="print the tidy table (one row per run and load), or write it as CSV")
    p.add_argument("folder")
    p.add_argument("--csv", help="write CSV here instead of printing")
    p = sub.add_parser("status", help="print where each run stands")
    p.add_argument("folder")
    p = sub.add_parser("show", help="print one result file: status, summary table, last time-series rows")
    p.add_argument("file", help="a result file of xnet run, sweep or study (runs/NAME.h5); it may still be running")
    args = parser.parse_args(argv)
    try:
        if args.command == "report":
            print(write_report(args.folder, args.output))
        elif args.command == "table":
            df = read_study(args.folder)
            if args.csv:
                df.to_csv(args.csv, index=False)
            else:
                with pd.option_context("display.max_rows", None, "display.width", 200):
                    print(df.drop(columns=["file"]).to_string(index=False))
        elif args.command == "show":
            show(args.file)
        else:
            print(study_status(args.folder).to_string(index=False))
    except (OSError, KeyError, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
