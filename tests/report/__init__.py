"""Tests of quizgen/report/: what authors are told beside the build (the answer-blind guessers)."""
