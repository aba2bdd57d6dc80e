import sys

from schedsearch.cli import main

sys.exit(main())
