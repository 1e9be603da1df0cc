#!/usr/bin/env python3
"""Write a synthetic LongMemEval file in the published format, for timing (docs/benchmarks.md,
"longmemeval: cost"): of the S split's shape by default, of the M split's with `--sessions 480`.
Nothing in it is real data; what it holds is described in
`automemo/measurements/stand_ins/longmemeval_file.py`, which writes it one question at a time.

    python3 scripts/longmemeval_synthetic.py /tmp/lme/longmemeval_synthetic_s.json \
        [--questions 500] [--sessions 50] [--turns 10] [--pool 2000] [--words 170] [--seed 0]
    python3 scripts/longmemeval_synthetic.py /tmp/lme/synthetic_m.json --questions 249 --sessions 480 \
        --fact-words

(`--fact-words`: each question's fact in words no filler turn holds; an M haystack's ~5,000 turns
hold any filler word by chance.)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

# Run as `python3 scripts/longmemeval_synthetic.py` from a checkout, installed or not.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from automemo.measurements.stand_ins.longmemeval_file import SyntheticShape, write_synthetic_longmemeval  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    for field in dataclasses.fields(SyntheticShape):
        if isinstance(field.default, bool):
            parser.add_argument(f"--{field.name.replace('_', '-')}", dest=field.name, default=field.default,
                                action=argparse.BooleanOptionalAction)
        else:
            parser.add_argument(f"--{field.name}", type=int, default=field.default)
    args = parser.parse_args()
    shape = SyntheticShape(**{f.name: getattr(args, f.name) for f in dataclasses.fields(SyntheticShape)})
    written = write_synthetic_longmemeval(args.out, shape)
    print(f"{written.path}: {written.questions} questions, {written.session_references} haystack sessions, "
          f"{written.distinct_sessions} distinct, {written.bytes / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
