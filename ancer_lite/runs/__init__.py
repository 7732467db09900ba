"""Layer 5: runs over test sets: the resumable certify loop with per-input streams and run manifests, the one
selection routine, the one cache-key scheme, logs, profiles and setups, the papers' tables."""
