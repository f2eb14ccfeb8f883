from promote_cli.cli import console

console()
