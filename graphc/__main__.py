"""`python -m graphc ...`: the `graphc` command line (see `graphc.cli`)."""

from .cli import main

raise SystemExit(main())
