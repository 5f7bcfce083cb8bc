"""Other torch versions: environments made on request (atomically), listed, removed; cards checked
under one, and the drift report. pip is faked where what is tested is quizgen's side of it; the slow
test at the end uses a real torch 1.13.1 (provisioned when absent: a download of about 1.8 GB)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import quizgen
from quizgen.cards import loader
from quizgen.cards.model import Card
from quizgen.cli import cli
from quizgen.execution import pool
from quizgen.execution.cache import job_key
from quizgen.execution.protocol import Answer, Outcome, RunJob
from quizgen.torch_versions import changed, drift, environments, installed, versions
from quizgen.torch_versions.installed import version as torch_version
from tests.support.fresh import printed
from tests.support.releases import TORCH_RELEASES

# Where the real environments live for this user (read before the suite moves the cache folder).
REAL_TORCHES = environments.root()
PIP = list(environments.PIP)  # the command that runs pip (the fixture below fakes it)
INSTALLED = installed.release()
PYTHON = f"Python {sys.version_info[0]}.{sys.version_info[1]}"  # what the index lists releases for

FAKE_PIP = """\
import json, os, pathlib, sys
python = pathlib.Path(sys.argv[1])
requirements = sys.argv[2:]
prefix = python.parent.parent
version = requirements[0].split("==")[1]
if os.environ.get("FAKE_PIP_REPORT"):
    seen = {"requirements": requirements, "final_exists": (prefix.parent / version).exists(),
            "listed": [p.name for p in prefix.parent.iterdir() if not p.name.startswith(".")],
            "tty": sys.stdout.isatty(), "pythonpath": os.environ.get("PYTHONPATH")}
    pathlib.Path(os.environ["FAKE_PIP_REPORT"]).write_text(json.dumps(seen))
if version == "9.9.9":
    print("ERROR: Could not find a version that satisfies the requirement torch==9.9.9 "
          "(from versions: 1.13.0, 1.13.1)")
    print("ERROR: No matching distribution found for torch==9.9.9")
    sys.exit(1)
print("Downloading torch-" + version + "-cp311-cp311-manylinux1_x86_64.whl (1.0 MB)", flush=True)
if version != "7.7.7":  # 7.7.7: pip says it worked but installs no torch
    site = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    info = site / f"torch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\\nName: torch\\nVersion: {version}\\n\\n")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text(f"__version__ = {version!r}\\n# " + "x" * 200_000)
"""


@pytest.fixture
def envs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder of environments for this test, and pip faked (torches.PIP) for the CLI."""
    where = tmp_path / "torches"
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(where))
    fake = tmp_path / "fake_pip.py"
    fake.write_text(FAKE_PIP)
    monkeypatch.setattr(environments, "PIP", [sys.executable, str(fake), "{python}"])
    monkeypatch.setattr(changed, "index_releases", lambda quick=False: TORCH_RELEASES)  # never the network
    return where


def provision(version: str, progress: environments.Progress | None = None) -> environments.Environment:
    return environments.provision(version, progress, pip=environments.PIP)


def test_where_environments_live(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("QUIZGEN_TORCH_DIR", raising=False)
    monkeypatch.setenv("QUIZGEN_CACHE_DIR", str(tmp_path / "c"))
    assert environments.folder("1.13.1") == tmp_path / "c" / "torch" / "1.13.1"
    monkeypatch.delenv("QUIZGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert environments.folder("2.0.1") == tmp_path / "x" / "quizgen" / "torch" / "2.0.1"
    monkeypatch.setenv("QUIZGEN_TORCH_DIR", str(tmp_path / "t"))
    assert environments.folder("2.0.1") == tmp_path / "t" / "2.0.1"


ARABIC_INDIC = "\u0661.\u0662.\u0663"  # digits to a regular expression's `\d`, not to pip
NOT_VERSIONS = ["1.13", "latest", "../1.13.1", "1.13.1/x", "2.0.1+cpu", "torch==2.0.1", "", ARABIC_INDIC]


@pytest.mark.parametrize("bad", NOT_VERSIONS)
def test_a_version_is_three_numbers(bad: str) -> None:
    with pytest.raises(environments.TorchError) as caught:
        environments.folder(bad)
    assert (
        caught.value.message
        == f"'{bad}' is not a torch version: give its three numbers, like 1.13.1 or 2.4.0"
    )


def test_numpy_before_2_for_a_torch_built_against_numpy_1() -> None:
    assert environments.requirements("1.13.1") == ["torch==1.13.1", "numpy<2"]
    assert environments.requirements("2.2.2") == ["torch==2.2.2", "numpy<2"]
    assert environments.requirements("2.3.0") == ["torch==2.3.0", "numpy<2"]
    assert environments.requirements("2.3.1") == ["torch==2.3.1", "numpy"]
    assert environments.requirements("2.13.0") == ["torch==2.13.0", "numpy"]


def test_the_installed_torch_runs_under_quizgens_own_python() -> None:
    version = installed.version()
    assert version != installed.NONE  # read from the metadata, without importing torch
    assert environments.python_for(installed.release()) == Path(sys.executable)
    assert installed.of(Path(sys.executable)) == version


def test_provision_builds_aside_then_renames_into_place(envs: Path, tmp_path: Path, monkeypatch) -> None:
    report = tmp_path / "report.json"
    monkeypatch.setenv("FAKE_PIP_REPORT", str(report))
    spec = importlib.util.find_spec("torch")  # found, not imported
    assert spec is not None and spec.origin is not None
    monkeypatch.setenv("PYTHONPATH", str(Path(spec.origin).parent.parent))  # a torch pip must not see
    assert environments.listing() == [] and environments.python_for("1.13.1") is None
    made = provision("1.13.1")
    seen = json.loads(report.read_text())
    # While pip ran, the version's folder did not exist and nothing was listed: a half-made
    # environment is never used.
    assert seen == {
        "requirements": ["torch==1.13.1", "numpy<2"],
        "final_exists": False,
        "listed": [],
        "tty": False,
        "pythonpath": None,
    }
    assert made.path == envs / "1.13.1" and made.python == envs / "1.13.1" / "bin" / "python"
    assert environments.python_for("1.13.1") == made.python
    assert installed.of(made.python) == "1.13.1"
    assert [p.name for p in envs.iterdir()] == ["1.13.1"]  # no partial folder left
    monkeypatch.delenv("PYTHONPATH")
    # Its own Python, without quizgen's site-packages: it cannot import quizgen's dependencies.
    out = subprocess.run(
        [str(made.python), "-c", "import torch, sys; print(torch.__version__); import click"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.stdout == "1.13.1\n" and "No module named 'click'" in out.stderr
    [listed] = environments.listing()
    assert (listed.version, listed.path) == ("1.13.1", made.path) and listed.size > 200_000


def test_provision_shows_pips_output_on_a_terminal(envs: Path, tmp_path: Path, monkeypatch) -> None:
    report = tmp_path / "report.json"
    monkeypatch.setenv("FAKE_PIP_REPORT", str(report))
    shown: list[bytes] = []
    provision("2.0.1", shown.append)
    assert json.loads(report.read_text())["tty"] is True  # pip draws its progress bar on a terminal only
    assert b"Downloading torch-2.0.1-cp311-cp311-manylinux1_x86_64.whl (1.0 MB)\r\n" in b"".join(shown)


def test_provision_again_keeps_the_environment(envs: Path, tmp_path: Path, monkeypatch) -> None:
    first = provision("1.13.1")
    marker = first.path / "kept"
    marker.write_text("")
    monkeypatch.setattr(environments, "PIP", ["false"])  # pip is not run again
    assert provision("1.13.1").path == first.path and marker.exists()


def test_a_failed_provision_leaves_nothing_and_says_why(envs: Path) -> None:
    with pytest.raises(environments.TorchError) as caught:
        provision("9.9.9")
    assert caught.value.message == (
        "could not provision torch 9.9.9: Could not find a version that satisfies the requirement "
        "torch==9.9.9 (from versions: 1.13.0, 1.13.1)"
    )
    assert list(envs.iterdir()) == []
    with pytest.raises(environments.TorchError) as caught:
        provision("7.7.7")
    assert caught.value.message == "torch 7.7.7: pip finished but did not install torch 7.7.7"
    assert list(envs.iterdir()) == []


def test_provisioning_in_a_card_repository_never_imports_its_files(
    envs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `quizgen torch add` is run where the build said so: in a downloaded repository. `python -m venv`
    # and `python -m pip` put the working folder first on the import path, so its `venv/` or `pip/`
    # package would run with the user's rights.
    repo = tmp_path / "repo"
    for name in ("venv", "pip"):
        (repo / name).mkdir(parents=True)
        (repo / name / "__init__.py").write_text("")
        (repo / name / "__main__.py").write_text(f"open({str(tmp_path / name)!r}, 'w').close()\n")
    monkeypatch.chdir(repo)
    provision("1.13.1")  # the venv made by `python -m venv` (pip faked)
    assert not (tmp_path / "venv").exists()
    with pytest.raises(environments.TorchError) as caught:  # pip's own command; the environment has no pip
        environments.provision("2.0.1", pip=PIP)
    assert "No module named pip" in caught.value.message
    assert not (tmp_path / "pip").exists()


def test_what_a_cut_short_provisioning_left_is_cleaned(envs: Path) -> None:
    proc = subprocess.Popen(["true"])  # a process that has ended: its provisioning was cut short
    proc.wait()
    stale = envs / f".partial-1.13.1-{proc.pid}"
    (stale / "bin").mkdir(parents=True)
    (stale / "bin" / "python").write_text("")
    alive = envs / f".partial-2.0.1-{os.getpid()}"  # another provisioning, still running
    alive.mkdir()
    assert environments.listing() == []  # never listed, never used
    provision("2.4.0")
    assert sorted(p.name for p in envs.iterdir()) == sorted(["2.4.0", alive.name])


def test_remove(envs: Path) -> None:
    provision("1.13.1")
    provision("2.0.1")
    assert [e.version for e in environments.listing()] == ["1.13.1", "2.0.1"]
    assert environments.remove("1.13.1") == envs / "1.13.1"
    assert [e.version for e in environments.listing()] == ["2.0.1"]
    assert [p.name for p in envs.iterdir()] == ["2.0.1"]
    with pytest.raises(environments.TorchError) as caught:
        environments.remove("1.13.1")
    assert (
        caught.value.message == "torch 1.13.1 is not provisioned (`quizgen torch list` shows those that are)"
    )


def test_remove_refuses_a_version_a_pool_runs_under(envs: Path, runner: CliRunner) -> None:
    made = provision("2.0.1")
    with environments.using(made.python):  # as versioned.run_on and drift hold it while their pool runs
        result = runner.invoke(cli, ["torch", "remove", "2.0.1"])
        assert (result.exit_code, result.output) == (
            1,
            "Error: torch 2.0.1 is in use: a build or check runs cards under it; run `quizgen torch remove "
            "2.0.1` again once it is done\n",
        )
        assert made.python.exists()
    assert runner.invoke(cli, ["torch", "remove", "2.0.1"]).exit_code == 0
    assert not made.path.exists()
    with pytest.raises(environments.TorchError) as caught, environments.using(made.python):  # it waited
        pass
    assert caught.value.message == "torch 2.0.1 was removed: `quizgen torch add 2.0.1` to run under it"


def test_cli_add_list_remove(envs: Path, runner: CliRunner) -> None:
    result = runner.invoke(cli, ["torch", "add", "1.13.1"])
    assert result.exit_code == 0, result.output
    said, *pip_lines, done = result.output.splitlines()  # off a terminal: what pip downloads, line by line
    assert said == (
        "torch 1.13.1: downloading torch==1.13.1 and what it needs with pip (about 3 GB to download, 5 GB "
        "on disk)"
    )
    assert any(line.startswith("pip: Downloading ") and line.endswith(" MB)") for line in pip_lines)
    assert done.startswith(f"torch 1.13.1: {envs / '1.13.1' / 'bin' / 'python'} (")
    result = runner.invoke(cli, ["torch", "list"])
    assert result.exit_code == 0, result.output
    shown, provisioned = result.output.splitlines()
    assert shown == f"{installed.version()}  installed with quizgen"
    assert provisioned.startswith("1.13.1  ") and provisioned.endswith(f"  {envs / '1.13.1'}")
    result = runner.invoke(cli, ["torch", "remove", "1.13.1"])
    assert (result.exit_code, result.output) == (0, f"removed {envs / '1.13.1'}\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["torch", "add", "9.9.9"],
            "Error: torch 9.9.9 is not a torch release (the newest the package index has is 2.15.0); the "
            f"releases for {PYTHON}: {', '.join(TORCH_RELEASES)}\n",
        ),
        (
            ["torch", "add", "1.12.0"],
            f"Error: torch 1.12.0 has no wheel for {PYTHON} (the oldest torch the package "
            f"index has for it is 1.13.0); the releases for {PYTHON}: "
            f"{', '.join(TORCH_RELEASES)}\n",
        ),
        (
            ["torch", "add", "2.0"],
            "Error: '2.0' is not a torch version: give its three numbers, like 1.13.1 or 2.4.0\n",
        ),
        (
            ["torch", "remove", "2.0.1"],
            "Error: torch 2.0.1 is not provisioned (`quizgen torch list` shows those that are)\n",
        ),
    ],
)
def test_cli_errors_exit_1_without_a_traceback(
    envs: Path, runner: CliRunner, args: list[str], message: str
) -> None:
    result = runner.invoke(cli, args)
    assert (result.exit_code, result.output) == (1, message)


def test_pip_failure_names_the_conflict() -> None:
    output = (
        b"Looking in indexes: https://pypi.org/simple\r\n"
        b"ERROR: Cannot install torch==2.15.0 because these package versions have conflicting "
        b"dependencies.\n\n"
        b"The conflict is caused by:\n    The user requested torch==2.15.0\n"
        b"    The user requested (constraint) torch<=2.14.1\n\nTo fix this you could try to:\n"
        b"ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/\n"
    )
    assert environments.pip_failure(output) == (
        "Cannot install torch==2.15.0 because these package versions have conflicting dependencies. "
        "(The user requested torch==2.15.0; The user requested (constraint) torch<=2.14.1)"
    )
    assert environments.pip_failure(b"\x1b[31mSomething broke\x1b[0m\r\n") == "Something broke"


def test_check_under_a_torch_not_provisioned_downloads_nothing(
    envs: Path, runner: CliRunner, project: Callable[..., Path], monkeypatch
) -> None:
    monkeypatch.setattr(environments, "PIP", ["false"])  # any pip run would fail the check loudly
    root = project({"a.yaml": ZERO_GRAD})
    args = ["check", "--cards", str(root / "cards"), "--out", str(root / "build"), "--torch", "1.13.1"]
    result = runner.invoke(cli, args)
    assert (result.exit_code, result.output) == (
        1,
        "Error: torch 1.13.1 is not provisioned: run `quizgen torch add 1.13.1` first "
        "(about 3 GB to download, 5 GB on disk, once)\n",
    )
    assert not envs.exists()


def test_another_torchs_pool_sees_quizgen_alone(envs: Path) -> None:
    path = environments.import_path()
    assert [p.name for p in path.iterdir()] == ["quizgen"]
    assert (path / "quizgen").resolve() == Path(quizgen.__file__).resolve().parent
    assert environments.import_path() == path  # made once
    assert pool.environment(str(path))["PYTHONPATH"] == str(path)
    assert str(Path(quizgen.__file__).resolve().parent.parent) in pool.environment()["PYTHONPATH"]


def test_results_are_cached_by_the_torch_that_ran_them() -> None:
    job: RunJob = {"type": "run", "setup": [], "code": {"code": "x = 1", "path": "a.yaml", "line": 1}}
    assert job_key(job) == job_key(job, torch_version())
    assert job_key(job, "1.13.1") != job_key(job)


def test_torch_commands_never_import_torch() -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from quizgen.cli import cli\n"
        "import quizgen.torch_versions.environments, quizgen.torch_versions.drift\n"
        "for args in (['torch', '--help'], ['torch', 'list'], ['check', '--help']):\n"
        "    assert CliRunner().invoke(cli, args).exit_code == 0\n"
        "print('torch' in sys.modules)\n"
    )
    assert printed(code) == "False"


ZERO_GRAD = """\
deck: Z
setup: |
  import torch
cards:
  - id: zero-grad
    kind: value
    ask: "What is `p.grad` after `opt.zero_grad()`?"
    code: |
      p = torch.nn.Parameter(torch.ones(1))
      opt = torch.optim.SGD([p], lr=0.1)
      p.sum().backward()
      opt.zero_grad()
    answer_expr: p.grad
    answer: null
  - id: same-everywhere
    kind: value
    ask: "What is `x`?"
    code: |
      x = (torch.tensor([1.0, 2.0]) * 2).tolist()
    answer_expr: x
    answer: [2.0, 4.0]
"""


def _card(root: Path, card_id: str) -> Card:
    return next(c for deck in loader.load_project(root / "cards") for c in deck.cards if c.id == card_id)


def _value(display: str, type_: str = "repr") -> Answer:
    return {"type": type_, "value": display, "display": display}  # type: ignore[typeddict-item]


def test_drift_compares_what_a_learner_sees(project: Callable[..., Path]) -> None:
    root = project({"z.yaml": ZERO_GRAD})
    card = _card(root, "zero-grad")
    at = f"{root / 'cards' / 'z.yaml'}"
    mine = Outcome(ok=True, output="x\n", value=_value("None", "none"), cited={"n": _value("1")})
    same = Outcome(ok=True, output="x\n", value=_value("None", "none"), cited={"n": _value("1")})
    assert drift.compare(card, mine, same) == []
    theirs = Outcome(ok=True, output="y\n", value=_value("tensor([0.])"), cited={"n": _value("1")})
    found = drift.compare(card, mine, theirs)
    assert [str(d.location) for d in found] == [
        f"{at}:14:13: card 'zero-grad' -> answer",
        f"{at}:8:11: card 'zero-grad' -> output",  # what the code printed
    ]
    assert [(d.installed, d.other) for d in found] == [("None", "tensor([0.])"), ("'x\\n'", "'y\\n'")]
    # A card that fails under one torch is one difference, at the field that runs, with its exception.
    error = "cite 'n' raised:\n    Traceback (most recent call last):\n    NameError: name 'p' is not defined"
    [failed] = drift.compare(card, mine, Outcome(ok=False, error=error))
    assert str(failed.location) == f"{at}:8:11: card 'zero-grad' -> code"
    assert (failed.installed, failed.other) == (
        "no error",
        "an error: cite 'n' raised: NameError: name 'p' is not defined",
    )
    report = drift.Report("1.13.1", "2.13.0", [*found, failed], cards=2, executed=3, seconds=1.5)
    assert report.lines() == [
        f"{at}:14:13: card 'zero-grad' -> answer: torch 2.13.0 gives None, torch 1.13.1 gives tensor([0.])",
        f"{at}:8:11: card 'zero-grad' -> output: torch 2.13.0 gives 'x\\n', torch 1.13.1 gives 'y\\n'",
        f"{at}:8:11: card 'zero-grad' -> code: torch 2.13.0 gives no error, torch 1.13.1 gives an error: "
        "cite 'n' raised: NameError: name 'p' is not defined",
        "1 card of 2 answers differently on torch 1.13.1 (3 executed, 1.50 s)",
    ]


@pytest.fixture(scope="module")
def real_torch() -> Iterator[str]:
    """The real torch 1.13.1, provisioned where this user keeps environments (downloaded once)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QUIZGEN_TORCH_DIR", str(REAL_TORCHES))
        environments.provision("1.13.1", None)
        yield "1.13.1"


@pytest.mark.slow
def test_drift_on_a_real_torch_before_2_0(
    real_torch: str, runner: CliRunner, project: Callable[..., Path]
) -> None:
    root = project({"z.yaml": ZERO_GRAD})
    args = ["check", "--cards", str(root / "cards"), "--out", str(root / "build"), "--torch", real_torch]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    release = installed.release()
    lines = result.output.splitlines()
    assert lines[0] == (
        f"{root / 'cards' / 'z.yaml'}:14:13: card 'zero-grad' -> answer: torch {release} gives None, "
        "torch 1.13.1 gives tensor([0.])"
    )
    assert lines[1].startswith("1 card of 2 answers differently on torch 1.13.1 (2 executed, ")
    assert len(lines) == 2
    again = runner.invoke(cli, args)  # the results under 1.13.1 are cached by that version
    assert again.output.splitlines()[1].startswith(
        "1 card of 2 answers differently on torch 1.13.1 (0 executed, "
    )
    # The installed torch's own check is untouched by the other version's results.
    plain = runner.invoke(cli, args[:-2])
    assert plain.exit_code == 0, plain.output
    assert "2 cards in 1 deck verified (0 executed, 2 from cache)" in plain.output


@pytest.mark.slow
def test_a_pool_under_a_real_torch_runs_in_the_sandbox(real_torch: str) -> None:
    python = environments.require(real_torch)
    job: RunJob = {
        "type": "run",
        "setup": [],
        "code": {"code": textwrap.dedent(SANDBOXED), "path": "a.yaml", "line": 1},
        "answer": True,
        "expr": {"code": "seen", "path": "a.yaml", "line": 9},
    }
    with pool.Pool(1, python=python, sandbox="require") as running:
        [(_, result)] = list(running.run({"a": job}))
        assert versions.release(running.torch_version) == "1.13.1"
    assert result["ok"], result
    seen = json.loads(result["value"]["value"])
    assert versions.release(seen["torch"]) == "1.13.1"
    assert seen["home"].startswith("/tmp/quizgen-") and seen["home"].endswith("/home")  # the job's own
    # Nothing of quizgen's own environment is on the path: not its site-packages, not its torch.
    assert all((".venv" not in p and "site-packages" not in p) or "torch/1.13.1" in p for p in seen["path"])
    assert seen["numpy"].startswith("1.")
    assert seen["writable"] is False


SANDBOXED = """\
import json, os, sys, numpy, torch
try:
    open(os.path.join(os.path.dirname(torch.__file__), "x"), "w")
    writable = True
except OSError:
    writable = False
seen = json.dumps({"torch": torch.__version__, "home": os.environ["HOME"], "path": sys.path,
                   "numpy": numpy.__version__, "writable": writable})
"""


def test_drift_groups_random_streams_and_says_what_it_could_not_tell(project: Callable[..., Path]) -> None:
    root = project({"z.yaml": ZERO_GRAD})
    at = f"{root / 'cards' / 'z.yaml'}"
    card = _card(root, "zero-grad")
    mine = Outcome(ok=True, value=_value("None", "none"))
    [plain] = drift.compare(card, mine, Outcome(ok=True, value=_value("tensor([0.])")))
    [drawn] = drift.compare(_card(root, "same-everywhere"), mine, Outcome(ok=True, value=_value("[1.0]")))
    slow = Outcome(ok=False, error="the snippet did not finish within 2 s (timeout) and was stopped")
    failed = Outcome(ok=False, error="AttributeError: x")
    assert drift.machine_failure(slow) and not drift.machine_failure(failed)
    undecided = drift._undecided(card, slow)
    found = [plain, dataclasses.replace(drawn, random=True), undecided]
    report = drift.Report("1.13.1", "2.13.0", found, cards=2, executed=3, seconds=1.5)
    assert report.lines() == [
        f"{at}:14:13: card 'zero-grad' -> answer: torch 2.13.0 gives None, torch 1.13.1 gives tensor([0.])",
        "1 card that draw from torch's random streams (seeded samples, a layer's initial weights): a release "
        "may change what a seed draws",
        f"  {at}:21:13: card 'same-everywhere' -> answer: torch 2.13.0 gives None, torch 1.13.1 gives [1.0]",
        f"{at}:8:11: card 'zero-grad' -> code: torch 1.13.1: could not tell: it ran out twice (the snippet "
        "did not finish within 2 s (timeout) and was stopped)",
        "2 cards of 2 answer differently on torch 1.13.1; 1 could not be told (3 executed, 1.50 s)",
    ]


DRIFTING = """\
deck: D
setup: |
  import torch
cards:
  - id: scaler-is-new
    kind: value
    ask: "What is the scale?"
    code: |
      scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    answer_expr: scaler.get_scale()
    answer: 4.0
    cite:
      growth: scaler.get_growth_factor()
    explain: "It grows by {{growth}}."
  - id: about-2-only
    torch: ">=2.0"
    kind: value
    ask: "Has torch a `compile`?"
    code: |
      there = hasattr(torch, "compile")
    answer_expr: there
    answer: true
  - id: slow-on-1
    kind: value
    timeout: 3
    ask: "What is `x`?"
    code: |
      import time
      if torch.__version__.startswith("1."):  # a machine too busy to finish it, as it were
          time.sleep(60)
      x = 2
    answer_expr: x
    answer: 2
"""


@pytest.mark.slow
def test_drift_is_about_torch_not_the_machine(
    real_torch: str, runner: CliRunner, project: Callable[..., Path]
) -> None:
    root = project({"d.yaml": DRIFTING})
    args = ["check", "--cards", str(root / "cards"), "--out", str(root / "build"), "--torch", real_torch]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    at = root / "cards" / "d.yaml"
    assert result.output.splitlines() == [
        # the code's own error, not its cite's knock-on `NameError: name 'scaler' is not defined`
        f"{at}:8:11: card 'scaler-is-new' -> code: torch {INSTALLED} gives no error, torch 1.13.1 gives an "
        "error: AttributeError: module 'torch.amp' has no attribute 'GradScaler'",
        # run twice, out of time twice: not a difference; 'about-2-only' (>=2.0) is left out
        f"{at}:27:11: card 'slow-on-1' -> code: torch 1.13.1: could not tell: it ran out twice (the snippet "
        "did not finish within 3 s (timeout))",
        result.output.splitlines()[-1],
    ]
    assert result.output.splitlines()[-1].startswith(
        "1 card of 2 answers differently on torch 1.13.1; 1 could not be told ("
    )
