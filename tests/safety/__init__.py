"""A stranger's repository against the build (docs/safety.md): its processes, files, text, YAML and state."""
