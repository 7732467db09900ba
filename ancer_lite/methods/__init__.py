"""Layer 3, the sample-wise optimizations: Isotropic DD and ANCER (`optimize`), RANCER (`rancer`), UCAN's noise
parameter generators (`ucan`, with their training recipes in `ucan_recipes`) and the input Hessian. Imports `core`
and `models`."""
