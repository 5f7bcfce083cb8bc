"""Tests of quizgen/execution/sandbox/: snippets run without network, home or writable files."""
