"""Tests of quizgen/render/lms/: SCORM packages, QTI items and Moodle XML, read by the formats' own rules."""
