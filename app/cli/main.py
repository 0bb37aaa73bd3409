"""The `lethe` command: one Typer app, a module per command group."""

from __future__ import annotations

import click
import typer

from app.cli import agents, audit, data, doctor, keys, ops, processes, receipts, staff, tenants
from app.core import runtime

cli = typer.Typer(name="lethe", help="Lethe memory service.", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)
processes.register(cli)
ops.register(cli)
data.register(cli)
doctor.register(cli)
agents.register(cli)
cli.add_typer(staff.group, name="staff")
cli.add_typer(receipts.group, name="receipts")
cli.add_typer(tenants.group, name="tenants")
cli.add_typer(audit.group, name="audit")
cli.add_typer(keys.group, name="keys")


def main(argv: list[str] | None = None) -> int:
    """Run the command; its exit code (2 for a usage error, as before). An embedded
    PostgreSQL the command started is stopped again when it ends."""
    try:
        return _run(argv)
    finally:
        runtime.release()


def _run(argv: list[str] | None) -> int:
    try:
        result = cli(args=argv, prog_name="lethe", standalone_mode=False)
    except click.exceptions.Exit as stop:
        return stop.exit_code
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Abort:
        return 1
    return result if isinstance(result, int) else 0
