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

RESULT_LIMIT = 16 << 20  # bytes of one job's result record (checked before it is parsed)
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

# Text that placeholders fill in (`{{output}}`, `{{answer}}`, a cite) is checked like written text and is
# bounded: a card file of 1 MiB full of `{{c}}` must not become hundreds of MB of pages. A card's field
# shows on one flashcard: the longest shipped one is under 2 KB, so 64 KiB is far past any real card
# and still keeps 10,000 cards' filled text (if every field were that long) within a few GB at worst.
MAX_FILLED_TEXT = 64 * 1024  # characters of one field once its placeholders are filled
# A build is refused once the text its placeholders add reaches this, whatever the number of cards: the
# shipped deck adds about 10 KB; a deck of 10,000 cards each quoting a 1 KB output adds 10 MB.
MAX_FILLED_TOTAL = 32 << 20  # characters
# An answer learners must give, or an exception's message: a string or message longer than this is
# not something a flashcard asks for (a tensor answer is bounded by MAX_ELEMENTS instead).
MAX_ANSWER_TEXT = 16 * 1024  # characters
MAX_IMAGE_BYTES = 16 << 20  # an image a card shows: a flashcard's picture, a diagram
MAX_TEMPLATE_BYTES = 1 << 20  # a project's template file (the largest packaged one is 3 KB)
# quizgen.lock: the shipped deck's is 38 KB for 123 cards and one more torch version, so 16 MiB holds some
# 50,000 cards' entries; parsed it takes about 20 times its size.
MAX_LOCK_BYTES = 16 << 20

# What the user allows, whatever a project's quizgen.toml says: a project may lower a limit, never lift
# it past this ceiling (raised by the user with --max-timeout or QUIZGEN_MAX_TIMEOUT). `--timeout` is the
# user's own word and is not capped.
MAX_TIMEOUT = 300.0  # seconds: ten times the default; an order search still gets ORDER_TIMEOUT_FACTOR x
MAX_TIMEOUT_ENV = "QUIZGEN_MAX_TIMEOUT"

RESULT_FORMAT = 10  # part of every cache key: raise it when a result gains or changes a field (8: float64
# answers display without decimal noise; 9: indented puzzles searched at every level, feedback with levels;
# 10: card code compiled without quizgen's own future flags, its annotations no longer strings)
# Build-cache entries not used for this many days are deleted (once a day, at the end of a run): long
# enough that a branch left for a few weeks still builds from the cache, short enough that a year of
# edited cards does not pile up.
CACHE_KEEP_DAYS = 30

INTERNAL_ERROR_EXIT = 70  # EX_SOFTWARE: quizgen itself failed
LOCK_NAME = "quizgen.lock"  # beside the cards: what the build verified (project/lock.py)
