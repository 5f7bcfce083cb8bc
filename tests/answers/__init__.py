"""Tests of quizgen/answers/: declared against executed answers, answers as read, the typed-answer judge."""
