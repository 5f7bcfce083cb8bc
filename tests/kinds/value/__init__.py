"""The value kind's variants (executed misconceptions): written, read, in the quiz and in Anki."""
