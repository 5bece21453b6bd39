"""Write the stored file ``rnn_comparison``: the same as ``python tools/store.py rnn_comparison``.

The registry (``transformer_lib.stored.STORED["rnn_comparison"]``) names the function that computes it
and the check that ``tests/test_stored.py`` runs.
"""

from __future__ import annotations

from store import main

if __name__ == "__main__":
    main(["rnn_comparison"])
