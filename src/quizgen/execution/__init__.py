"""Running snippets: typed jobs and results, the warm forked worker pool, the order search, the cache.

Only `worker`, `runner`, `describe` and `order.runs`'s search run inside worker processes; they are
the only code that imports torch. Everything else here is the parent's side.
"""
