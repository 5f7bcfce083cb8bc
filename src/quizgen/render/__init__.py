"""The outputs: each is a renderer (verified decks in, files out) behind the interface in render/base.py."""
