"""Run every bench_*.py (or those named on the command line); each writes results/<name>.md."""

from __future__ import annotations

import pathlib
import runpy
import sys

HERE = pathlib.Path(__file__).parent


def main() -> None:
    sys.path.insert(0, str(HERE))
    names = sys.argv[1:] or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    for name in names:
        print(f"== bench_{name}", flush=True)
        script = HERE / f"bench_{name}.py"
        sys.argv = [str(script)]  # each benchmark parses its own (empty) arguments
        runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
