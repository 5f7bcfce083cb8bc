"""Tests of quizgen/render/math/: TeX to MathML for the quiz, TeX kept for Anki, images."""
