import os
import sys

# `python -m quizgen` puts the working folder first on the import path: run in a card repository, its
# `yaml.py` or `click/` would be imported, as you, by the imports below. quizgen needs nothing from there.
if not sys.flags.safe_path and sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd():
    del sys.path[0]

from quizgen.cli import main  # (after the import path is made safe)

main()
