"""Write the package's stored results: any or all of ``transformer_lib.stored.STORED``.

    python tools/store.py NAME [NAME ...]   # e.g. rnn_comparison; --list names them with their cost
    python tools/store.py --all             # every file, Table 3 last (it appends the runs it lacks)

Each is computed by the function the registry names and written where chapters read it;
``tests/test_stored.py`` checks each. Run it after changing what a file's function depends on (the
shipped weights, the corpus, the encoder...), then re-execute the chapters that read it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transformer_lib.stored import STORED, store  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", choices=[[], *STORED], metavar="NAME", help=", ".join(STORED))
    parser.add_argument("--all", action="store_true", help="every stored result")
    parser.add_argument("--list", action="store_true", help="name each, with its function and cost")
    args = parser.parse_args(argv)
    if args.list:
        for s in STORED.values():
            print(f"{s.name:16} {s.path.name:22} {s.computed_by} ({s.cost})")
        return
    names = list(STORED) if args.all else args.names
    if not names:
        parser.error("name a stored result, or give --all")
    for name in names:
        print(f"{name}: {store(name)} -> {STORED[name].path}", flush=True)


if __name__ == "__main__":
    main()
