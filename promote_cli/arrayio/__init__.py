"""Array files: safe `.npy` reading and atomic writing (`npy`), and the streaming driver
that casts files chunk by chunk (`castfile`)."""
