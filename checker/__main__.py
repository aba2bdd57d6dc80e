"""``python -m checker`` is the ``schedcheck`` command."""

import sys

from checker.cli import main

sys.exit(main())
