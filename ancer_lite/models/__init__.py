"""Layer 2: base classifiers (small quick models, the papers' architectures and checkpoints), their training and
the data. Imports `core` only."""
