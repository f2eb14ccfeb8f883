"""TOSA numerics over numpy arrays: CAST with its legality, reference semantics, fast
kernels (verified accelerations of the reference) and statistics. Imports numpy and
ml_dtypes; the oracle never loads this package."""
