"""Write the stored file ``agreement_heads``: the same as ``python tools/store.py agreement_heads``.

The registry (``transformer_lib.stored.STORED["agreement_heads"]``) names the function that computes it
and the check that ``tests/test_stored.py`` runs.
"""

from __future__ import annotations

from store import main

if __name__ == "__main__":
    main(["agreement_heads"])
