"""Helpers shared by test files, each module one job: a test imports these and conftest's fixtures, never
another test module (test_architecture.py holds it)."""
