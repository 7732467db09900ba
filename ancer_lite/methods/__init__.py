"""Layer 3, the sample-wise optimizations: Isotropic DD and ANCER (`optimize`), RANCER (`rancer`), UCAN's noise
parameter generators (`ucan`) and the input Hessian. Imports `core` and `models`."""
