"""Outputs for a course's LMS: SCORM packages, QTI and Moodle question banks."""
