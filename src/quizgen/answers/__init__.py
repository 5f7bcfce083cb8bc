"""Answers: what an executed value looks like, how a typed or declared answer is read and compared."""
