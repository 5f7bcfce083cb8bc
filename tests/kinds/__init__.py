"""Tests of quizgen/kinds/: the registry; a kind's tests, in every client, in its own folder."""
