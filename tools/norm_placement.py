"""Write the stored file ``norm_placement``: the same as ``python tools/store.py norm_placement``.

The registry (``transformer_lib.stored.STORED["norm_placement"]``) names the function that computes it
and the check that ``tests/test_stored.py`` runs.
"""

from __future__ import annotations

from store import main

if __name__ == "__main__":
    main(["norm_placement"])
