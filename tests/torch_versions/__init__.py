"""Tests of quizgen/torch_versions/: other torch environments, the matrix, judged_on, labelled, changed."""
