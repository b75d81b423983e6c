"""``python -m naiveopt.fuzz --cases 5000 --seed S [--out DIR]``: a differential fuzzing campaign.

Every case is a random naive kernel optimized under random options and verified on the OpenCL
device against its input. A miscompile or a crash is reduced and written to DIR as a
reproducer, a lit test whose RUN line is the naiveopt command that shows the failure (copied
into tests/lit/fuzz/, ``lit tests/lit/fuzz/NAME`` runs it); the exit status is 1 if any case
failed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from .campaign import campaign, reduce, reproducer


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m naiveopt.fuzz", description=__doc__.split(
        "\n\n")[0])
    p.add_argument("--cases", type=int, default=1000, help="number of cases (default 1000)")
    p.add_argument("--seed", type=int, default=int(time.time()) % 100000,
                   help="campaign seed (default: from the clock; printed)")
    p.add_argument("--start", type=int, default=0, help="first case index (to resume)")
    p.add_argument("--out", default="fuzz-failures", help="directory for reproducers "
                   "(default fuzz-failures/)")
    p.add_argument("--no-reduce", action="store_true", help="write failing cases unreduced")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per case")
    args = p.parse_args(argv)
    print(f"naiveopt fuzz: seed {args.seed}, cases {args.start}..{args.start + args.cases - 1}",
          flush=True)

    def progress(case, outcome) -> None:
        if args.verbose or outcome.is_bug:
            print(f"case {case.index}: {outcome.kind} {'/'.join(outcome.applied)} "
                  f"{outcome.detail.strip().splitlines()[-1] if outcome.detail else ''}",
                  flush=True)
        if outcome.is_bug:
            source = case.source if args.no_reduce else reduce(case, outcome)
            os.makedirs(args.out, exist_ok=True)
            path = os.path.join(args.out, case.filename)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(reproducer(case, source, outcome))
            print(f"  reproducer: {path}", flush=True)

    report = campaign(args.seed, args.cases, args.start, progress)
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
