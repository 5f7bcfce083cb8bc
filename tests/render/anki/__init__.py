"""Tests of quizgen/render/anki/: the .apkg in a real Anki collection, its cards' JavaScript in Chromium."""
