"""torch's costly first uses that several jobs share are made once: in the zygote, or for `torch.compile`
in a worker of its own (execution/warming.py)."""

from __future__ import annotations

from quizgen.execution import warming
from quizgen.execution.pool import Pool
from quizgen.execution.protocol import Job
from tests.support.fresh import printed

# What wrapping a model in torch.compile imports (and the zygote's own warm-up does not).
PROBE = "import sys\nwarm = 'torch._inductor.compile_fx' in sys.modules\n"


def _run(code: str, expr: str = "") -> Job:
    job = {
        "type": "run",
        "setup": [{"code": "import torch\n", "path": "cards/t.yaml", "line": 1}],
        "code": {"code": code, "path": "cards/t.yaml", "line": 2},
        "answer": bool(expr),
    }
    if expr:
        job["expr"] = {"code": expr, "path": "cards/t.yaml", "line": 9}
    return job  # type: ignore[return-value]


COMPILES = PROBE + "model = torch.compile(torch.nn.Linear(2, 1))\n"


def test_a_first_use_two_jobs_share_is_named() -> None:
    plain = _run("x = 1\n")
    assert warming.shared({"a": _run(COMPILES), "b": _run("f = torch.compile\n")}) == ["compile"]
    assert warming.shared({"a": _run(COMPILES), "b": plain}) == []  # one job pays the same either way
    assert warming.shared({"a": plain, "b": plain}) == []
    vmaps = {"a": _run("y = torch.func.vmap(torch.sin)(x)\n"), "b": _run("from torch.func import jacrev\n")}
    assert warming.shared(vmaps) == ["func"]
    assert warming.apart({**vmaps, "c": plain, "d": plain}, 2) == {"func": 2}


def _warm(results: dict[str, dict[str, object]]) -> dict[str, str]:
    return {key: result["value"]["display"] for key, result in results.items()}  # type: ignore[index]


def test_jobs_that_share_a_first_use_start_warm_even_on_a_worker_forked_before() -> None:
    with Pool(1, warm=False) as pool:
        assert dict(pool.run({"plain": _run("x = 1\n")}))["plain"]["ok"]  # its worker: forked cold
        alone = _warm(dict(pool.run({"alone": _run(COMPILES, "warm")})))
        shared = _warm(dict(pool.run({"a": _run(COMPILES, "warm"), "b": _run(COMPILES + "# b\n", "warm")})))
        after = _warm(dict(pool.run({"later": _run(PROBE, "warm")})))
    assert alone == {"alone": "False"}  # made in its own process: no later job sees it
    assert shared == {"a": "True", "b": "True"}
    # The worker that made it retires once its jobs are handed out: the zygote never made it.
    assert after == {"later": "False"}


# What the first optimizer imports (a cold pool's workers, each job that makes one: warm.py)
DYNAMO = "import sys\nwarm = 'torch._dynamo' in sys.modules\n"
STEPS = "opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)\n"


def test_optimizers_two_jobs_make_are_made_once_in_a_cold_pool() -> None:
    """A split search's parts (order.split) each make the card's optimizer: without this each part's
    worker imported torch._dynamo (2-3 s of CPU) on its own."""
    assert warming.shared({"a": _run(STEPS), "b": _run("from torch import optim\n")}) == ["optimizers"]
    assert warming.shared({"a": _run(STEPS), "b": _run("x = 1\n")}) == []
    with Pool(1, warm=False) as pool:
        alone = _warm(dict(pool.run({"alone": _run(DYNAMO + STEPS, "warm")})))
        both = {"a": _run(DYNAMO + STEPS, "warm"), "b": _run(DYNAMO + STEPS + "# b\n", "warm")}
        shared = _warm(dict(pool.run(both)))
    assert alone == {"alone": "False"}
    assert shared == {"a": "True", "b": "True"}


def test_a_warm_zygote_makes_the_optimizers_no_second_time() -> None:
    """Else a build's warm pool, told that its jobs share optimizers, would replace all its workers."""
    code = "from quizgen.execution.worker import warm\nwarm.first_use()\n"
    code += "print(warm.on_demand(['optimizers']))\n"
    assert printed(code) == "False"


def test_jobs_that_need_no_first_use_start_before_it_is_made() -> None:
    """`torch.compile`'s first use (~1 s of CPU) is made in a worker of its own, beside the jobs that need
    none of it, which never see it: the zygote every other job is forked from stays without it."""
    with Pool(2, warm=False) as pool:
        work = {
            "first": _run(PROBE, "warm"),
            "a": _run(COMPILES, "warm"),
            "b": _run(COMPILES + "# b\n", "warm"),
            "plain": _run("x = 1\n"),
        }
        results = _warm({key: r for key, r in pool.run(work) if key != "plain"})
        later = _warm(dict(pool.run({"later": _run(PROBE, "warm")})))
    assert results == {"first": "False", "a": "True", "b": "True"}
    assert later == {"later": "False"}  # an idle worker that made none takes it


def test_a_first_use_most_jobs_need_is_made_in_the_zygote() -> None:
    """More jobs than one worker's share: the one worker making it would run most of the run alone."""
    work = {"a": _run(COMPILES), "b": _run(COMPILES + "# b\n"), "plain": _run("x = 1\n")}
    assert warming.apart(work, jobs=2) == {}  # 2 of 3 jobs, on 2 workers
    assert warming.apart({**work, "more": _run("y = 1\n")}, jobs=2) == {"compile": 2}
    with Pool(2, warm=False) as pool:
        results = _warm(dict(pool.run({"a": _run(COMPILES, "warm"), "b": _run(COMPILES + "# b\n", "warm")})))
        later = _warm(dict(pool.run({"later": _run(PROBE, "warm")})))
    assert results == {"a": "True", "b": "True"}
    assert later == {"later": "True"}  # every worker is forked from it now


def test_jobs_that_need_a_first_use_apart_are_handed_out_behind_the_longest() -> None:
    """A pool is handed as many jobs as it has workers: those needing `torch.compile` come right behind
    the longest, so their worker makes it beside those, not at the end while the other cores wait."""
    work = {"search": _run("x = 1\n"), "p1": _run("y = 1\n"), "c1": _run(COMPILES), "p2": _run("z = 1\n")}
    work["c2"] = _run(COMPILES + "# 2\n")
    assert list(warming.behind_longest(work, ["compile"], jobs=2)) == ["search", "c1", "c2", "p1", "p2"]
    assert list(warming.behind_longest(work, ["compile"], jobs=1)) == ["c1", "c2", "search", "p1", "p2"]
    assert list(warming.behind_longest(work, [], jobs=2)) == list(work)
