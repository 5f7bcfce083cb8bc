#!/usr/bin/env bash
# Mutation testing of the truth path (issue 9): answer comparison and the judge's Python twin, verification,
# the cache key, the order search's pruning. mutmut runs in a throw-away copy of the tree, so no mutants/
# folder or cache is ever left in the repository, and only the truth-path functions below are scored.
#
#   bench/mutation.sh          the work tree as it is (src/, tests/, pyproject.toml's [tool.mutmut])
#   bench/mutation.sh REV      a commit, e.g. d1ff4f8 (before issue 9), with the pure tests of its time
#
# Environment: MUTVENV  the tool's own venv, never the project's (default ~/.cache/quizgen-mutvenv; made
#                       on first use with constraints.txt, so torch stays the pinned CPU wheel)
#              JOBS     mutmut's worker processes (default 1)
#              EXTRA_TESTS  more test ids for the selection (e.g. tests/execution/test_execute.py, which starts the
#                       worker pool); then mutate only FILES that run in the parent process: a mutated module
#                       imported by the worker makes it exit 70 while mutmut collects coverage
#              FILES    space-separated src/ paths replacing only_mutate
#              KEEP=1   keep the copy (to `mutmut show` a survivor there)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=${MUTVENV:-${XDG_CACHE_HOME:-$HOME/.cache}/quizgen-mutvenv}
jobs=${JOBS:-1}
rev=${1:-}

if [ ! -x "$venv/bin/mutmut" ]; then
    python3 -m venv "$venv"
    mapfile -t deps < <(python3 -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' "$root/pyproject.toml")
    "$venv/bin/pip" install --quiet -c "$root/constraints.txt" "mutmut==3.8.1" pytest "${deps[@]}"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/quizgen-mutation.XXXXXX")
if [ -z "${KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; else echo "copy kept in $work"; fi
if [ -n "$rev" ]; then
    git -C "$root" archive "$rev" src tests pyproject.toml | tar -x -C "$work"
else
    cp -r "$root/src" "$root/tests" "$root/pyproject.toml" "$work/"
fi
find "$work" -name __pycache__ -prune -exec rm -rf {} +
cd "$work"

# The [tool.mutmut] section (the one from the work tree; a built-in one for the layout before issue 9),
# with FILES / EXTRA_TESTS applied; prints the mutant-name patterns in scope, file by file.
scope=$(python3 - "$root/pyproject.toml" <<'EOF'
import json, os, sys, tomllib

if os.path.exists("src/quizgen/answers.py"):  # kinds as modules, execution/ (issue 9 and after)
    config = tomllib.load(open(sys.argv[1], "rb"))["tool"]["mutmut"]
    scope = {
        "src/quizgen/answers.py": ["quizgen.answers.*"],
        "src/quizgen/verify.py": ["quizgen.verify.x_verify_card*", "quizgen.verify.x_indent*"],
        "src/quizgen/kinds/base.py": ["quizgen.kinds.base.x_raised_problem*", "quizgen.kinds.base.x_snippet_lines*"],
        "src/quizgen/kinds/value.py": [
            "quizgen.kinds.value.xǁValueKindǁverify*", "quizgen.kinds.value.x__exception_problem*",
        ],
        "src/quizgen/kinds/myth.py": ["quizgen.kinds.myth.xǁMythKindǁverify*", "quizgen.kinds.myth.x_computed_verdict*"],
        "src/quizgen/kinds/order.py": ["quizgen.kinds.order.xǁOrderKindǁverify*"],
        "src/quizgen/execution/cache.py": ["quizgen.execution.cache.x_job_key*", "quizgen.execution.cache.x__without_places*"],
        "src/quizgen/execution/worker/order_search/candidates.py": [
            f"quizgen.execution.worker.order_search.candidates.x_{f}*"
            for f in ("_scoped_names", "dependencies", "relax", "candidate_orders", "distractor_variants")
        ],
    }
else:  # d1ff4f8: values.py, verify.py, cache.py, orders.py; verify.py had no test without the pool
    config = {
        "source_paths": ["src"],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q"],
        "pytest_add_cli_args_test_selection": [
            "tests/test_values.py",
            "tests/test_orders.py",
            "tests/test_cache.py::test_job_key_ignores_places_but_not_code",
            "tests/test_cache.py::test_cache_round_trip_and_corruption",
        ],
    }
    scope = {
        "src/quizgen/values.py": ["quizgen.values.*"],
        "src/quizgen/verify.py": ["quizgen.verify.*"],
        "src/quizgen/cache.py": ["quizgen.cache.x_job_key*", "quizgen.cache.x__without_places*"],
        "src/quizgen/orders.py": ["quizgen.orders.*"],
    }
files = os.environ.get("FILES", "").split() or list(scope)
config["only_mutate"] = files
config["pytest_add_cli_args_test_selection"] += os.environ.get("EXTRA_TESTS", "").split()
text = open("pyproject.toml", encoding="utf-8").read()
text = text.split("[tool.mutmut]")[0].rstrip() + "\n\n[tool.mutmut]\n"
text += "".join(f"{key} = {json.dumps(value)}\n" for key, value in config.items())
open("pyproject.toml", "w", encoding="utf-8").write(text)
print(json.dumps({f: scope.get(f, []) for f in files}))
EOF
)
mapfile -t patterns < <(python3 -c 'import json, sys
print("\n".join(p for ps in json.loads(sys.argv[1]).values() for p in ps))' "$scope")

echo "mutmut $("$venv/bin/mutmut" --version | awk '{print $NF}') in $work, $jobs worker(s); tests:"
python3 -c 'import tomllib; print("  " + "\n  ".join(tomllib.load(open("pyproject.toml", "rb"))["tool"]["mutmut"]["pytest_add_cli_args_test_selection"]))'
if ! "$venv/bin/mutmut" run --max-children "$jobs" "${patterns[@]}" >mutmut.log 2>&1; then
    tail -40 mutmut.log
    exit 1
fi
"$venv/bin/mutmut" results --all true >results.txt

# Score: killed / all mutants of the functions in scope, per file; then each survivor's changed line.
python3 - "$scope" <<'EOF' >score.txt
import collections, fnmatch, json, re, sys

scope = json.loads(sys.argv[1])
counts = {f: collections.Counter() for f in scope}
survivors = []
for line in open("results.txt", encoding="utf-8"):
    m = re.match(r"\s+(\S+__mutmut_\d+): (.+)$", line)
    if not m:
        continue
    name, status = m.groups()
    for file, patterns in scope.items():
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            counts[file][status] += 1
            if status not in ("killed", "no tests"):  # no tests: counted above, listed by `mutmut results`
                survivors.append((name, status))
            break
total = collections.Counter()
for file, c in counts.items():
    total.update(c)
    rest = ", ".join(f"{n} {s}" for s, n in sorted(c.items()) if s != "killed")
    print(f"{file:42} killed {c['killed']:4}/{sum(c.values()):<4} {rest}")
score = 100 * total["killed"] / max(1, sum(total.values()))
print(f"{'overall':42} killed {total['killed']:4}/{sum(total.values()):<4} ({score:.1f}%)")
with open("survivors.txt", "w", encoding="utf-8") as out:
    out.write("\n".join(f"{n} {s}" for n, s in survivors) + "\n")
EOF
cat score.txt
if [ -s survivors.txt ] && [ "$(wc -w <survivors.txt)" -gt 0 ]; then
    echo "survivors:"
    while read -r name status; do
        change=$("$venv/bin/mutmut" show "$name" 2>/dev/null | grep -E '^\+[^+]' | head -1 | sed 's/^+ *//')
        echo "  $name ($status): $change"
    done <survivors.txt
fi
