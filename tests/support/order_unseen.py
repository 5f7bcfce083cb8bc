"""Order puzzles in shapes order_corpus.py does not draw, for the fast search's equivalence with the
plain one: a scheduler stepping over `repeat: 3`, accumulation with `if (i + 1) % k == 0:`, loops two
levels deep, `with torch.no_grad():` and `with torch.autocast(...)` blocks, try/except around an in-place
op on a leaf's view, a closure defined and later called (LBFGS), Adam holding state from steps taken in
setup, a forward hook registered in setup, `torch.func.grad`, dropout and fresh noise drawn from the
seeded generator, a class defined in blocks, lines that print or warn, and distractors that are right
at another level than the one written.

Seeded apart from every other generator: UNSEEN_SEED (4221); the tests' corpus uses 21, the benchmark's
2100, bench/orders.py's random puzzles 0. Every puzzle's check holds for the order as written.
"""

from __future__ import annotations

import random

from quizgen.execution.protocol import SearchJob
from tests.support.order_puzzles import job

UNSEEN_SEED = 4221

_OPTIMIZERS = [
    "torch.optim.SGD({p}, lr=0.1, momentum=0.9)",
    "torch.optim.Adam({p}, lr=0.05)",
    "torch.optim.AdamW({p}, lr=0.05, weight_decay=0.1)",
    "torch.optim.RMSprop({p}, lr=0.01, momentum=0.5)",
]
_SAME = "assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(model.parameters(), ref.parameters()))\n"


def _pair(rng: random.Random, model: str = "torch.nn.Linear(3, 1)") -> tuple[str, str]:
    """Setup for a model and its optimizer and a reference copy with its own, and the optimizer's code."""
    opt = rng.choice(_OPTIMIZERS)
    setup = (
        f"torch.manual_seed({rng.randint(0, 50)})\n"
        f"model = {model}\n"
        f"opt = {opt.format(p='model.parameters()')}\n"
        "criterion = torch.nn.MSELoss()\n"
        "x, y = torch.randn(4, 3), torch.randn(4, 1)\n"
        f"ref = {model}\n"
        "ref.load_state_dict(model.state_dict())\n"
        f"ref_opt = {opt.format(p='ref.parameters()')}\n"
    )
    return setup, opt


def scheduler_epochs(rng: random.Random) -> SearchJob:
    """Three epochs of a step and a scheduler's step (`sched.step()` before `opt.step()` warns)."""
    setup, _ = _pair(rng)
    sched = rng.choice(
        [
            "torch.optim.lr_scheduler.StepLR({o}, step_size=1, gamma=0.5)",
            "torch.optim.lr_scheduler.MultiStepLR({o}, milestones=[1, 2], gamma=0.3)",
            "torch.optim.lr_scheduler.CosineAnnealingWarmRestarts({o}, T_0=2)",
        ]
    )
    setup += f"sched = {sched.format(o='opt')}\nref_sched = {sched.format(o='ref_opt')}\n"
    setup += "for _ in range(3):\n    ref_opt.zero_grad(); criterion(ref(x), y).backward(); ref_opt.step()\n"
    setup += "    ref_sched.step()\n"
    lines = [
        "opt.zero_grad()",
        "loss = criterion(model(x), y)",
        "loss.backward()",
        "opt.step()",
        "sched.step()",
    ]
    check = _SAME + "assert opt.param_groups[0]['lr'] == ref_opt.param_groups[0]['lr']\n"
    distractors = rng.choice([(), ("sched.step(); sched.step()",), ("opt.zero_grad(set_to_none=False)",)])
    return job(setup, lines, check, repeat=3, distractors=distractors)


def accumulate_if(rng: random.Random) -> SearchJob:
    """Accumulation over micro-batches stepping under `if (i + 1) % k == 0:`."""
    setup, _ = _pair(rng)
    k = rng.choice([2, 3])
    setup += (
        f"batches = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range({2 * k})]\n"
        "for j, (bx, by) in enumerate(batches):\n"
        f"    (criterion(ref(bx), by) / {k}).backward()\n"
        f"    if (j + 1) % {k} == 0:\n"
        "        ref_opt.step(); ref_opt.zero_grad()\n"
    )
    lines = [
        "for i, (bx, by) in enumerate(batches):",
        f"(criterion(model(bx), by) / {k}).backward()",
        f"if (i + 1) % {k} == 0:",
        "opt.step()",
        "opt.zero_grad()",
    ]
    levels = [0, 1, 1, 2, 2]
    distractors = rng.choice([(), (f"if i % {k} == 0:",), ("opt.zero_grad(set_to_none=False)",)])
    levels += [1] * len(distractors)
    return job(setup, lines, _SAME, distractors=distractors, levels=levels)


def nested_loops(rng: random.Random) -> SearchJob:
    """Epochs over batches: the step two levels deep."""
    setup, _ = _pair(rng)
    setup += (
        "batches = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(2)]\n"
        "for _ in range(2):\n    for bx, by in batches:\n"
        "        ref_opt.zero_grad(); criterion(ref(bx), by).backward(); ref_opt.step()\n"
    )
    lines = [
        "for epoch in range(2):",
        "for bx, by in batches:",
        "opt.zero_grad()",
        "criterion(model(bx), by).backward()",
        "opt.step()",
    ]
    return job(setup, lines, _SAME, levels=[0, 1, 2, 2, 2])


def manual_sgd(rng: random.Random) -> SearchJob:
    """A step written by hand: the update under `with torch.no_grad():`, gradients cleared after."""
    lr = rng.choice([0.1, 0.05])
    setup = (
        f"torch.manual_seed({rng.randint(0, 50)})\n"
        "model = torch.nn.Linear(3, 1)\nx, y = torch.randn(4, 3), torch.randn(4, 1)\n"
        "ref = torch.nn.Linear(3, 1)\nref.load_state_dict(model.state_dict())\n"
        f"ref_opt = torch.optim.SGD(ref.parameters(), lr={lr})\n"
        "for _ in range(2):\n    ref_opt.zero_grad(); ((ref(x) - y) ** 2).mean().backward(); ref_opt.step()\n"
    )
    lines = [
        "((model(x) - y) ** 2).mean().backward()",
        "with torch.no_grad():",
        "for p in model.parameters():",
        f"p -= {lr} * p.grad",
        "model.zero_grad()",
    ]
    distractors = rng.choice([(), (f"p = p - {lr} * p.grad",)])
    levels = [0, 0, 1, 2, 0] + [2] * len(distractors)
    return job(setup, lines, _SAME, repeat=2, distractors=distractors, levels=levels)


def autocast_block(rng: random.Random) -> SearchJob:
    """The forward pass under `with torch.autocast("cpu", dtype=torch.bfloat16):`."""
    setup, _ = _pair(rng)
    setup += (
        "with torch.autocast('cpu', dtype=torch.bfloat16):\n    ref_out = ref(x)\n"
        "ref_opt.zero_grad(); ((ref_out.float() - y) ** 2).mean().backward(); ref_opt.step()\n"
    )
    lines = [
        "opt.zero_grad()",
        "with torch.autocast('cpu', dtype=torch.bfloat16):",
        "out = model(x)",
        "loss = ((out.float() - y) ** 2).mean()",
        "loss.backward()",
        "opt.step()",
    ]
    check = _SAME + "assert out.dtype == torch.bfloat16\n"
    return job(setup, lines, check, levels=[0, 0, 1, rng.choice([0, 1]), 0, 0])


def try_except(rng: random.Random) -> SearchJob:
    """An in-place op on a view of a leaf that requires grad raises; the handler records it."""
    op = rng.choice(["v.add_(1)", "v.mul_(2)", "v.zero_()"])
    lines = [
        "w = torch.ones(4, requires_grad=True)",
        "v = w[:2]",
        "try:",
        op,
        "except RuntimeError as e:",
        "msg = str(e)",
    ]
    levels = [0, 0, 0, 1, 0, 1]
    check = "assert 'leaf' in msg and 'view' in msg\n"
    distractors = rng.choice([(), ("msg = 'leaf'",), ("v = w.detach()[:2]",)])
    levels += [1] * len(distractors)
    return job("", lines, check, distractors=distractors, levels=levels)


def closure_lbfgs(rng: random.Random) -> SearchJob:
    """A closure defined in blocks and handed to LBFGS's step."""
    target = [round(rng.uniform(-1, 1), 2) for _ in range(2)]
    setup = f"w = torch.nn.Parameter(torch.zeros(2))\nt = torch.tensor({target})\n"
    lines = [
        "opt = torch.optim.LBFGS([w], lr=1, max_iter=20, line_search_fn='strong_wolfe')",
        "def closure():",
        "opt.zero_grad()",
        "loss = ((w - t) ** 2).sum()",
        "loss.backward()",
        "return loss",
        "opt.step(closure)",
    ]
    check = "assert torch.allclose(w, t, atol=1e-3)\n"
    return job(setup, lines, check, levels=[0, 0, 1, 1, 1, 1, 0])


def adam_with_state(rng: random.Random) -> SearchJob:
    """Adam after a few steps taken in setup (its moments), two more passes of the lines."""
    steps = rng.randint(1, 3)
    reuse = rng.random() < 0.5
    name = "loss" if reuse else "ref_loss"
    setup = (
        f"torch.manual_seed({rng.randint(0, 50)})\n"
        "model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))\n"
        "ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))\n"
        "ref.load_state_dict(model.state_dict())\n"
        "opt = torch.optim.Adam(model.parameters(), lr=0.05)\n"
        "ref_opt = torch.optim.Adam(ref.parameters(), lr=0.05)\n"
        "x, y = torch.randn(4, 3), torch.randn(4, 1)\n"
        f"for _ in range({steps}):\n"
        "    for m, o in ((model, opt), (ref, ref_opt)):\n"
        "        o.zero_grad(); ((m(x) - y) ** 2).mean().backward(); o.step()\n"
        "for _ in range(2):\n"
        f"    ref_opt.zero_grad(); {name} = ((ref(x) - y) ** 2).mean(); {name}.backward(); ref_opt.step()\n"
    )
    lines = ["opt.zero_grad()", "loss = ((model(x) - y) ** 2).mean()", "loss.backward()", "opt.step()"]
    return job(setup, lines, _SAME, repeat=2, distractors=rng.choice([(), ("opt.state.clear()",)]))


def hooked_model(rng: random.Random) -> SearchJob:
    """A forward hook registered in setup records activations the lines clear and read."""
    setup, _ = _pair(
        rng, "torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))"
    )
    setup += (
        "acts = []\n"
        "model[1].register_forward_hook(lambda m, i, o: acts.append(o.detach().sum().item()))\n"
        "ref_opt.zero_grad(); criterion(ref(x), y).backward(); ref_opt.step()\n"
    )
    lines = [
        "acts.clear()",
        "opt.zero_grad()",
        "loss = criterion(model(x), y)",
        "loss.backward()",
        "opt.step()",
        "seen = len(acts)",
    ]
    return job(setup, lines, _SAME + "assert seen == 1\n", distractors=rng.choice([(), ("acts = []",)]))


def func_grad(rng: random.Random) -> SearchJob:
    """Gradient descent through torch.func.grad, a learning rate decayed by a line."""
    lr = rng.choice([0.1, 0.2])
    setup = (
        "from torch.func import grad\n"
        "def loss_fn(w):\n    return ((w - 3.0) ** 2).sum()\n"
        f"w = torch.zeros(2)\nlr = {lr}\n"
        f"ref = torch.zeros(2)\nref_lr = {lr}\n"
        "for _ in range(2):\n    ref = ref - ref_lr * 2 * (ref - 3.0); ref_lr = ref_lr * 0.5\n"
    )
    lines = ["g = grad(loss_fn)(w)", "w = w - lr * g", "lr = lr * 0.5"]
    check = "assert torch.allclose(w, ref) and lr == ref_lr\n"
    return job(setup, lines, check, repeat=2, distractors=rng.choice([(), ("w -= lr * g",)]))


def dropout_noise(rng: random.Random) -> SearchJob:
    """Dropout in training mode and noise drawn from the seeded generator: where each draw happens
    matters."""
    p = rng.choice([0.2, 0.5])
    setup, _ = _pair(
        rng, f"torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout({p}), torch.nn.Linear(4, 1))"
    )
    setup += (
        "torch.manual_seed(7)\n"
        "ref_noise = 0.1 * torch.randn(4, 1)\n"
        "ref_opt.zero_grad(); criterion(ref(x), y + ref_noise).backward(); ref_opt.step()\n"
        "torch.manual_seed(7)\n"
    )
    lines = [
        "noise = 0.1 * torch.randn(4, 1)",
        "opt.zero_grad()",
        "loss = criterion(model(x), y + noise)",
        "loss.backward()",
        "opt.step()",
    ]
    return job(setup, lines, _SAME, distractors=rng.choice([(), ("model.eval()",)]))


def class_in_blocks(rng: random.Random) -> SearchJob:
    """A module class defined in blocks, made and called."""
    k = rng.randint(2, 4)
    lines = [
        "class Scale(torch.nn.Module):",
        "def forward(self, x):",
        f"return {k} * x",
        "m = Scale()",
        "out = m(torch.ones(2))",
    ]
    check = f"assert out.tolist() == [{float(k)}, {float(k)}]\n"
    distractors = rng.choice([(), (f"return x * {k}",), ("def __call__(self, x):",)])
    levels = [0, 1, 2, 0, 0] + [2 if d.startswith("return") else 1 for d in distractors]
    return job("", lines, check, distractors=distractors, levels=levels)


def prints_and_warns(rng: random.Random) -> SearchJob:
    """Lines that print and warn among lines that compute."""
    setup = "import warnings\nlog = []\n"
    lines = [
        "a = torch.arange(3.0)",
        "print('a', a.sum().item())",
        "warnings.warn('about to scale')",
        "b = a * 2",
        "log.append(b.sum().item())",
        "print(log)",
    ]
    check = "assert log == [6.0]\n"
    return job(setup, lines, check, distractors=rng.choice([(), ("log.append(a.sum().item())",)]))


def right_elsewhere(rng: random.Random) -> SearchJob:
    """A distractor written at a level where it is wrong, right at another: the search must find it
    usable there (or answer as the plain search does)."""
    xs = [rng.randint(1, 5) for _ in range(3)]
    lines = ["total = 0", "for x in xs:", "total += x", "mean = total / len(xs)"]
    distractor, level = rng.choice([("n = len(xs)", 1), ("total = total + 0", 1), ("mean = total / 3", 1)])
    check = f"assert total == {sum(xs)} and mean == {sum(xs) / 3!r}\n"
    return job(f"xs = {xs!r}\n", lines, check, distractors=(distractor,), levels=[0, 0, 1, 0, level])


SHAPES = [
    scheduler_epochs,
    accumulate_if,
    nested_loops,
    manual_sgd,
    autocast_block,
    try_except,
    closure_lbfgs,
    adam_with_state,
    hooked_model,
    func_grad,
    dropout_noise,
    class_in_blocks,
    prints_and_warns,
    right_elsewhere,
]


def unseen(n: int, seed: int = UNSEEN_SEED) -> list[tuple[str, SearchJob]]:
    """One puzzle of every shape, then shapes drawn at random: `n` in all, each with its shape's name."""
    rng = random.Random(seed)
    shapes = [*SHAPES, *(rng.choice(SHAPES) for _ in range(max(0, n - len(SHAPES))))][:n]
    return [(shape.__name__, shape(rng)) for shape in shapes]
