"""``python -m helpers.level_b``: the level-B command line (``cli.main``)."""

import sys

from helpers.level_b.cli import main

sys.exit(main())
