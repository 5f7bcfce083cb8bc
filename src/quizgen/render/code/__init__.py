"""Code in card text as highlighted HTML."""
