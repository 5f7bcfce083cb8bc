"""Tests of quizgen/render/: card text to HTML, what learners see in both outputs, renderers side by side."""
