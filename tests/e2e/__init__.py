"""The whole program as a user meets it: the shipped deck, the installed tool, the tutorial, the docs site,
the same bytes twice, many cards."""
