"""Command groups of the command line, each a module; cli.py holds the top-level commands and adds these."""
