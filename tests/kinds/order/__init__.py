"""The order kind: its answer, what it accepts and counts, in the quiz and in Anki."""
