"""quizgen: Anki decks and HTML quizzes whose answers are computed by running PyTorch."""

__version__ = "0.1.0"
