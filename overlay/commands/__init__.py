"""Subcommands of the euchre-overlay CLI: one module each, each with register(subparsers)."""
