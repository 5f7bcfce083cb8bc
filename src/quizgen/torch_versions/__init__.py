"""Torch versions: environments, the project's matrix, judged-on, drift and bisect."""
