"""Array files: safe `.npy` reading and the header format (`npy`), atomic outputs that
replace only regular files (`atomic`), regular-file opening, identities and printable
names (`files`), the bounded header literal parser (`literal`), and the driver that plans
and casts files chunk by chunk (`castfile`)."""
