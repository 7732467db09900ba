"""`python -m ancer_lite ...`: the command line `ancer-certify` (`tooling.cli`)."""
import sys

from .tooling.cli import main

sys.exit(main())
