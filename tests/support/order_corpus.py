"""A corpus of realistic order puzzles, from the shapes people write, for the order search: training steps
with every `torch.optim` optimizer, learning-rate schedulers, AMP's GradScaler, gradient accumulation,
indented loops with distractors, setups that build their reference with the lines' own names (and so
leave an autograd graph in them), optimizers that hold state.

Seeded apart from the benchmark's puzzles (bench/orders.py: `--seed 0` for its random ones): the tests
use CORPUS_SEED (21), `python bench/orders.py --corpus N` uses BENCH_SEED (2100), so neither was tuned
on the other. Every puzzle's check holds for the order as written (it compares with a reference the
setup trains the right way).
"""

from __future__ import annotations

import random

from quizgen.execution.protocol import SearchJob
from tests.support.order_puzzles import job

CORPUS_SEED = 21  # the tests' corpus
BENCH_SEED = 2100  # the benchmark's: a different draw from the same shapes

OPTIMIZERS = [
    "torch.optim.SGD({p}, lr=0.1)",
    "torch.optim.SGD({p}, lr=0.1, momentum=0.9)",
    "torch.optim.SGD({p}, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)",
    "torch.optim.Adam({p}, lr=0.01)",
    "torch.optim.AdamW({p}, lr=0.01)",
    "torch.optim.Adam({p}, lr=0.01, amsgrad=True)",
    "torch.optim.RMSprop({p}, lr=0.01)",
    "torch.optim.Adagrad({p}, lr=0.1)",
    "torch.optim.Adadelta({p})",
    "torch.optim.Adamax({p}, lr=0.01)",
    "torch.optim.NAdam({p}, lr=0.01)",
    "torch.optim.RAdam({p}, lr=0.01)",
    "torch.optim.ASGD({p}, lr=0.01)",
    "torch.optim.Rprop({p}, lr=0.01)",
]
SCHEDULERS = [
    "torch.optim.lr_scheduler.StepLR({o}, step_size=1, gamma=0.5)",
    "torch.optim.lr_scheduler.ExponentialLR({o}, gamma=0.9)",
    "torch.optim.lr_scheduler.CosineAnnealingLR({o}, T_max=4)",
    "torch.optim.lr_scheduler.LambdaLR({o}, lambda e: 1 / (e + 1))",
    "torch.optim.lr_scheduler.OneCycleLR({o}, max_lr=0.1, total_steps=10)",
    "torch.optim.lr_scheduler.LinearLR({o}, start_factor=0.5, total_iters=3)",
]
MODELS = [
    "torch.nn.Linear(3, 1)",
    "torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))",
    "torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))",
]


def _model_setup(rng: random.Random, reuse: bool, scheduler: bool) -> tuple[str, str]:
    """Setup lines for a model, its optimizer (and scheduler), data, and a reference trained one step the
    right way: the model's and the optimizer's code, and what a right step is for the reference."""
    model = rng.choice(MODELS)
    opt = rng.choice(OPTIMIZERS)
    sched = rng.choice(SCHEDULERS) if scheduler else ""
    lines = [
        "torch.manual_seed(0)",
        f"model = {model}",
        f"opt = {opt.format(p='model.parameters()')}",
        "criterion = torch.nn.MSELoss()",
        "x, y = torch.randn(4, 3), torch.randn(4, 1)",
        f"ref = {model}",
        "ref.load_state_dict(model.state_dict())",
        f"ref_opt = {opt.format(p='ref.parameters()')}",
    ]
    if sched:
        lines += [f"sched = {sched.format(o='opt')}", f"ref_sched = {sched.format(o='ref_opt')}"]
    out, loss = ("out", "loss") if reuse else ("ref_out", "ref_loss")
    step = [
        "ref_opt.zero_grad()",
        f"{out} = ref(x)",
        f"{loss} = criterion({out}, y)",
        f"{loss}.backward()",
        "ref_opt.step()",
    ]
    if sched:
        step.append("ref_sched.step()")
    return "\n".join(lines) + "\n", "\n".join(step) + "\n"


def training_step(rng: random.Random) -> SearchJob:
    """One training step: zero_grad, forward, loss, backward, step (a scheduler's step), once or twice."""
    reuse, scheduler = rng.random() < 0.5, rng.random() < 0.4
    repeat = rng.choice([1, 2])
    setup, step = _model_setup(rng, reuse, scheduler)
    setup += f"for _ in range({repeat}):\n" + "".join("    " + s + "\n" for s in step.splitlines())
    lines = ["opt.zero_grad()", "out = model(x)", "loss = criterion(out, y)", "loss.backward()", "opt.step()"]
    if scheduler:
        lines.append("sched.step()")
    distractors = tuple(rng.sample(["opt.zero_grad(set_to_none=False)", "loss = criterion(y, out)"], 1))
    if rng.random() < 0.5:
        distractors = ()
    if reuse and rng.random() < 0.5:  # distractors a reference's names make tempting
        distractors = ("out = model(x).detach()",)
    check = "assert all(torch.allclose(a, b) for a, b in zip(model.parameters(), ref.parameters()))\n"
    return job(setup, lines, check, repeat=repeat, distractors=distractors)


def logged_step(rng: random.Random) -> SearchJob:
    """A training step that also keeps a running loss and counts what it saw: lines that hardly depend
    on each other, the reference's names reused or not."""
    reuse = rng.random() < 0.5
    setup, step = _model_setup(rng, reuse, False)
    loss = "loss" if reuse else "ref_loss"
    setup += "running, seen, ref_running = 0.0, 0, 0.0\n"
    setup += "".join(s + "\n" for s in step.splitlines()) + f"ref_running += {loss}.item()\n"
    lines = [
        "opt.zero_grad()",
        "out = model(x)",
        "loss = criterion(out, y)",
        "loss.backward()",
        "opt.step()",
        "running += loss.item()",
        "seen += len(y)",
    ]
    check = (
        "assert all(torch.allclose(a, b) for a, b in zip(model.parameters(), ref.parameters()))\n"
        "assert abs(running - ref_running) < 1e-6 and seen == 4\n"
    )
    return job(setup, lines, check, distractors=("running = loss.item()",))


def amp_step(rng: random.Random) -> SearchJob:
    """A training step with AMP's GradScaler on the CPU (its state is keyed by id(optimizer))."""
    reuse = rng.random() < 0.5
    setup, _ = _model_setup(rng, reuse, False)
    setup += (
        "scaler = torch.amp.GradScaler('cpu', init_scale=4.0)\n"
        "ref_scaler = torch.amp.GradScaler('cpu', init_scale=4.0)\n"
        "ref_opt.zero_grad()\n"
        "ref_scaler.scale(criterion(ref(x), y)).backward()\n"
        "ref_scaler.step(ref_opt)\n"
        "ref_scaler.update()\n"
    )
    lines = [
        "opt.zero_grad()",
        "loss = criterion(model(x), y)",
        "scaler.scale(loss).backward()",
        "scaler.step(opt)",
        "scaler.update()",
    ]
    check = (
        "assert all(torch.allclose(a, b) for a, b in zip(model.parameters(), ref.parameters()))\n"
        "assert scaler.get_scale() == ref_scaler.get_scale()\n"
    )
    return job(setup, lines, check)


def accumulation(rng: random.Random) -> SearchJob:
    """Gradient accumulation over micro-batches, indented: a loop, a step every k batches."""
    setup, _ = _model_setup(rng, rng.random() < 0.5, False)
    k = rng.choice([2, 3])
    setup += (
        f"batches = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range({k})]\n"
        "for bx, by in batches:\n"
        f"    (criterion(ref(bx), by) / {k}).backward()\n"
        "ref_opt.step()\n"
        "ref_opt.zero_grad()\n"
    )
    lines = [
        "for bx, by in batches:",
        f"loss = criterion(model(bx), by) / {k}",
        "loss.backward()",
        "opt.step()",
        "opt.zero_grad()",
    ]
    levels = [0, 1, 1, 0, 0]
    distractors: tuple[str, ...] = ()
    if rng.random() < 0.6:
        distractors = (rng.choice(["opt.zero_grad()\nopt.step()", "loss = criterion(model(bx), by)"]),)
        levels.append(1)
    check = "assert all(torch.allclose(a, b) for a, b in zip(model.parameters(), ref.parameters()))\n"
    return job(setup, lines, check, distractors=distractors, levels=levels)


def indented_loop(rng: random.Random) -> SearchJob:
    """A plain loop with a condition, and a distractor that imitates its body."""
    xs = [rng.randint(-5, 5) for _ in range(rng.randint(3, 5))]
    positives = [x for x in xs if x > 0] or [1]
    xs = xs if any(x > 0 for x in xs) else [*xs, 1]
    lines = ["total = 0", "count = 0", "for x in xs:", "if x > 0:", "total += x", "count += 1"]
    levels = [0, 0, 0, 1, 2, 2]
    check = f"assert (total, count) == ({sum(positives)}, {len(positives)})\n"
    if rng.random() < 0.5:
        lines.append("mean = total / count")
        levels.append(0)
        check += f"assert mean == {sum(positives) / len(positives)!r}\n"
    distractor = rng.choice(["total = x", "count = count + x", "total += 1"])
    levels.append(rng.choice([1, 2]))
    return job(f"xs = {xs!r}\n", lines, check, distractors=(distractor,), levels=levels)


def optimizer_state(rng: random.Random) -> SearchJob:
    """Lines around an optimizer that holds state (momentum buffers, Adam's moments), in two passes."""
    opt = rng.choice([o for o in OPTIMIZERS if "momentum" in o or "Adam" in o])
    setup = (
        "torch.manual_seed(0)\n"
        "w = torch.nn.Parameter(torch.ones(3))\n"
        f"opt = {opt.format(p='[w]')}\n"
        "ref_w = torch.nn.Parameter(torch.ones(3))\n"
        f"ref_opt = {opt.format(p='[ref_w]')}\n"
        "for _ in range(2):\n"
        "    ref_opt.zero_grad(); g = (ref_w ** 2).sum(); g.backward(); ref_opt.step()\n"
    )
    lines = ["opt.zero_grad()", "g = (w ** 2).sum()", "g.backward()", "opt.step()"]
    return job(setup, lines, "assert torch.allclose(w, ref_w)\n", repeat=2)


def function_step(rng: random.Random) -> SearchJob:
    """A training step written as a function whose body is a block of its own (a step function, or an
    optimizer stepped in a post-accumulate hook), with what its body reads built by a line: the body runs
    when a later step calls it. Small: an indented puzzle is searched at every level, so each block more
    multiplies its cost."""
    setup, step = _model_setup(rng, rng.random() < 0.5, False)
    built = next(line for line in setup.splitlines() if line.startswith("opt = "))  # the setup's own
    setup += "for _ in range(2):\n" + "".join("    " + s + "\n" for s in step.splitlines())
    if rng.random() < 0.5:
        lines = [
            built,  # (the setup made one already: the line makes it anew)
            "def train_step():",
            "opt.zero_grad(); criterion(model(x), y).backward(); opt.step()",
            "train_step(); train_step()",
        ]
        levels = [0, 0, 1, 0]
        distractors: tuple[str, ...] = (rng.choice(["criterion(model(x), y).backward()", "opt.zero_grad()"]),)
    else:
        per = built.removeprefix("opt = ").replace("model.parameters()", "[p]")
        lines = [
            f"opts = {{p: {per} for p in model.parameters()}}",
            "def hook(p):",
            "opts[p].step(); opts[p].zero_grad()",
            "for p in model.parameters():",
            "p.register_post_accumulate_grad_hook(hook)",
            "criterion(model(x), y).backward(); criterion(model(x), y).backward()",
        ]
        levels = [0, 0, 1, 0, 1, 0]
        distractors = ()  # (with one, the plain search of 7 blocks at every level passes its CPU budget)
    levels += [1] * len(distractors)
    check = "assert all(torch.allclose(a, b) for a, b in zip(model.parameters(), ref.parameters()))\n"
    return job(setup, lines, check, distractors=distractors, levels=levels)


SHAPES = [
    training_step,
    training_step,
    logged_step,
    amp_step,
    accumulation,
    indented_loop,
    optimizer_state,
    function_step,
]


def corpus(n: int, seed: int = CORPUS_SEED) -> list[tuple[str, SearchJob]]:
    """`n` puzzles drawn from the shapes, each with its shape's name."""
    rng = random.Random(seed)
    return [(shape.__name__, shape(rng)) for shape in (rng.choice(SHAPES) for _ in range(n))]
