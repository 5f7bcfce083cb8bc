"""Tests of quizgen/execution/worker/order_search/: the order puzzles' accepted orders, searched fast."""
