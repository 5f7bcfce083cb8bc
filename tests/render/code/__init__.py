"""Tests of quizgen/render/code/: highlighting."""
