from promote_cli.cli import run

run()
