"""Tests of quizgen/push/: into Anki's collection with Anki closed, and through AnkiConnect."""
