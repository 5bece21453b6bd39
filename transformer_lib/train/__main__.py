"""``python -m transformer_lib.train --help``"""

from .cli import main

raise SystemExit(main())
