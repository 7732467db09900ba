"""Layer 8: notebook execution and the `make all` profile, the companion website and its check."""
