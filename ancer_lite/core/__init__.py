"""Layer 1, the mathematics every paper shares: noise families, the smoothed classifier (PREDICT, CERTIFY), certified
regions and their geometry (ANCER App. D, RANCER Eq. 5-6), Algorithm 1, and the argument checks, files and
vocabulary below them. Needs NumPy, SciPy and torch only; imports no other layer."""
from .allocator import keep_freed_memory

keep_freed_memory()  # once per process: glibc keeps freed memory for reuse (`allocator`; ANCER_KEEP_FREED_MEMORY=0: off)
