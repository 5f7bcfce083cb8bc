"""The order puzzles' search: every accepted order of a puzzle's lines, run in a worker process."""
