"""Where the test run's time went: printed at the end of tools/test.sh (and so of .ci/run).

    python tools/ci_durations.py LOGS_FOLDER [--top 15]

Reads the folder tools/test.sh writes: ``phases`` (one ``name seconds`` line per phase, wall
clock) and the pytest JUnit XML files (``*.xml``). Prints the phases, the seconds per test file (or
notebook) in each run, and the slowest tests, so that a growing check is seen where it grows.
"""

from __future__ import annotations

import argparse
import collections
import xml.etree.ElementTree as ET
from pathlib import Path


def _cases(xml: Path) -> list[tuple[str, str, float]]:
    """(file, test, seconds) for every test case of a JUnit XML file."""
    cases = []
    for case in ET.parse(xml).iter("testcase"):
        classname = case.get("classname", "")
        # pytest writes tests.test_x (a module) or book.07_training_inference (a notebook)
        parts = classname.split(".")
        file = "/".join(parts[:2]) if parts and parts[0] in ("tests", "book") else classname
        cases.append((file, case.get("name", ""), float(case.get("time", 0.0))))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", type=Path)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    print("\n== where the time went")
    phases = args.logs / "phases"
    if phases.exists():
        print(f"{'phase (wall clock)':44s} {'seconds':>8s}")
        for line in phases.read_text().split("\n"):
            if line.strip():
                name, seconds = line.rsplit(" ", 1)
                print(f"{name:44s} {int(seconds):8d}")
    for xml in sorted(args.logs.glob("*.xml")):
        cases = _cases(xml)
        per_file: collections.Counter[str] = collections.Counter()
        for file, _, seconds in cases:
            per_file[file] += seconds
        print(f"\n-- {xml.stem}: {len(cases)} tests, {sum(per_file.values()):.0f} s in tests; per file:")
        for file, seconds in per_file.most_common(args.top):
            print(f"  {seconds:8.1f}  {file}")
        print("   slowest tests:")
        for file, name, seconds in sorted(cases, key=lambda c: -c[2])[:args.top]:
            print(f"  {seconds:8.1f}  {file}::{name}")


if __name__ == "__main__":
    main()
