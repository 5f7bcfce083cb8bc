"""Tests of quizgen/render/quiz.py and static/quiz/: the HTML quiz as files and in Chromium."""
