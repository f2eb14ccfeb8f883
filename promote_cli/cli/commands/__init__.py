"""One module per command: parse, call the public API, render."""
