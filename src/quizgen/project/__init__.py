"""The card project on disk: settings, the build's state, the lock, safe file access, scaffolding."""
