"""Write the stored file ``book_corpus``: the same as ``python tools/store.py book_corpus``.

The registry (``transformer_lib.stored.STORED["book_corpus"]``) names the function that computes it
and the check that ``tests/test_stored.py`` runs.
"""

from __future__ import annotations

from store import main

if __name__ == "__main__":
    main(["book_corpus"])
