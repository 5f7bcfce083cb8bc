"""Tests of quizgen/project/: init and settings, the lock, check --locked, folder trees."""
