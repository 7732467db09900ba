"""Layer 6: the one visual language and table of method names (`style`), the figure helper, notebook display and
step timing."""
