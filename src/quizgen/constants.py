"""Every default and limit in one place, so the CLI, the loader, the schema and the worker agree."""

from __future__ import annotations

DEFAULT_TIMEOUT = 30.0  # seconds one snippet may run
ORDER_TIMEOUT_FACTOR = 10  # an order search runs many candidate orders: it gets this many timeouts
DEFAULT_MEMORY = 2 << 30  # bytes a worker may grow by (RLIMIT_AS above its size at start)
DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-6

OUTPUT_LIMIT = 64 * 1024  # characters of printed output kept per job
MAX_ELEMENTS = 10_000  # elements of a tensor answer
FILE_LIMIT = 64 * 1024 * 1024  # bytes a snippet may write into one file (RLIMIT_FSIZE)
RETIRE_AFTER_JOBS = 500  # a worker is replaced after this many jobs (each ran in its own child)

REPEAT_MIN, REPEAT_MAX = 1, 100  # how often an order puzzle's block may run
MIN_ORDER_LINES = 2
MAX_ORDER_LINES = 100  # lines (or distractors) of one order puzzle: far past any a learner could order
MAX_CANDIDATES = 362880  # 9!: a puzzle with more free orderings than this is not one a learner can do

# Card files come from strangers: what the loader reads of one is bounded, so a hostile file is a located
# error within a second and some tens of MB, never a hang. The largest shipped deck: 23 KB, 414 nodes.
MAX_CARD_FILE_BYTES = 1 << 20  # 1 MiB, about a thousand cards
MAX_YAML_NODES = 50_000  # per file, an alias counting as every node it repeats ("billion laughs")
MAX_YAML_TEXT = 2 << 20  # characters of the values in a file, an alias counting as the text it repeats
MAX_YAML_DEPTH = 64  # lists and mappings nested in one another

RESULT_FORMAT = 7  # part of every cache key: raise it when a result gains or changes a field
# Build-cache entries not used for this many days are deleted (once a day, at the end of a run): long
# enough that a branch left for a few weeks still builds from the cache, short enough that a year of
# edited cards does not pile up.
CACHE_KEEP_DAYS = 30

INTERNAL_ERROR_EXIT = 70  # EX_SOFTWARE: quizgen itself failed
