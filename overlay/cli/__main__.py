"""``python -m overlay.cli``: the same as the ``euchre-overlay`` console command."""

import sys

from . import main

sys.exit(main())
