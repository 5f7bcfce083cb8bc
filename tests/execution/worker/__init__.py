"""Tests of quizgen/execution/worker/: what runs a job in the worker process, and what it leaves behind."""
