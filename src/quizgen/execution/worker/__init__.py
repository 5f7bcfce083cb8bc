"""The worker side of execution: the only code that imports torch."""
