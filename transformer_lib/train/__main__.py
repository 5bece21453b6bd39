"""``python -m transformer_lib.train --help``"""

from .cli import main
from .stops import exit_with

exit_with(main())
