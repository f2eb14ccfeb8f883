"""The shared vocabulary: dtypes (their traits and every framework's spellings) and the
operand grammar of the CLI contract. Both subsystems, the promotion oracle and the TOSA
numerics, speak it; `numpy_types` bridges it to numpy/ml_dtypes for the numerics only."""
