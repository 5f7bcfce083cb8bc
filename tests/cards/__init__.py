"""Tests of quizgen/cards/: reading card files, their fields and text, stored parses, SVG images."""
