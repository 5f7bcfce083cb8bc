"""Tests of quizgen/execution/ (the parent's side): the worker pool, the result cache, progress."""
