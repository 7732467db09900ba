"""Layer 7, one study per notebook: what it runs, its tables, figures and claims (unit-tested on tiny fixtures)."""
