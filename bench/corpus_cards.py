"""A corpus of realistic cards quizgen was not tuned on: value, myth and basic cards in the shapes people
write about training (every `torch.optim` optimizer and learning-rate scheduler, AMP with `GradScaler`,
hooks, DDP on gloo with one process, `torch.func`, custom modules, data loaders, checkpoints).

    python bench/corpus_cards.py OUT_DIR [--cards 400] [--seed 2111]

Each card is one template filled in by a `random.Random(seed)`: CORPUS_SEED (2111) by default, kept
apart from the benchmark's own inputs (bench/run.py's value cards take no seed: card i is template
i mod 4 with numbers from i; bench/orders.py's random puzzles use `--seed`, 0 by default), so what the
engine is tuned on and what it is judged on never come from one generator state. The same seed gives
the same cards, byte for byte.
"""

from __future__ import annotations

import argparse
import random
import textwrap
from collections.abc import Callable
from pathlib import Path

import yaml

CORPUS_SEED = 2111
SETUP = "import torch\nimport torch.nn as nn\n"
DECK_SIZE = 1000  # cards per file (the first starts the deck, the rest continue it)

OPTIMIZERS = {
    # name -> keyword arguments people write
    "SGD": "lr={lr}",
    "SGD_momentum": "lr={lr}, momentum=0.9",
    "SGD_nesterov": "lr={lr}, momentum=0.9, nesterov=True, weight_decay=1e-4",
    "Adam": "lr={lr}",
    "Adam_amsgrad": "lr={lr}, amsgrad=True",
    "AdamW": "lr={lr}, weight_decay=0.01",
    "Adamax": "lr={lr}",
    "Adadelta": "lr=1.0",
    "Adagrad": "lr={lr}",
    "Adafactor": "lr={lr}",
    "RMSprop": "lr={lr}, alpha=0.9",
    "RMSprop_centered": "lr={lr}, centered=True, momentum=0.5",
    "Rprop": "lr={lr}",
    "NAdam": "lr={lr}",
    "RAdam": "lr={lr}",
    "ASGD": "lr={lr}",
}
SCHEDULERS = {
    # name -> (constructor arguments after the optimizer, whether step() takes a metric)
    "StepLR": ("step_size=2, gamma=0.5", False),
    "MultiStepLR": ("milestones=[1, 3], gamma=0.1", False),
    "ExponentialLR": ("gamma=0.9", False),
    "CosineAnnealingLR": ("T_max=5", False),
    "CosineAnnealingWarmRestarts": ("T_0=2, T_mult=2", False),
    "LambdaLR": ("lr_lambda=lambda epoch: 0.95 ** epoch", False),
    "MultiplicativeLR": ("lr_lambda=lambda epoch: 0.9", False),
    "ConstantLR": ("factor=0.5, total_iters=2", False),
    "LinearLR": ("start_factor=0.25, total_iters=4", False),
    "PolynomialLR": ("total_iters=5, power=2.0", False),
    "OneCycleLR": ("max_lr=0.1, total_steps=10", False),
    "CyclicLR": ("base_lr=0.001, max_lr=0.1, step_size_up=2", False),
    "ReduceLROnPlateau": ("mode='min', patience=0, factor=0.5", True),
}


def _lr(rng: random.Random) -> float:
    return rng.choice([0.1, 0.05, 0.01, 0.001, 0.3])


def _optimizer(rng: random.Random, name: str | None = None) -> tuple[str, str]:
    """(a label, the constructor call on `params`) for an optimizer."""
    name = name or rng.choice(sorted(OPTIMIZERS))
    cls = name.split("_")[0]
    return name, f"torch.optim.{cls}(params, {OPTIMIZERS[name].format(lr=_lr(rng))})"


def optimizer_steps(rng: random.Random, name: str | None = None) -> dict:
    label, make = _optimizer(rng, name)
    k, steps = rng.randint(2, 5), rng.randint(1, 4)
    code = f"""\
        torch.manual_seed({rng.randint(0, 99)})
        model = nn.Linear({k}, 1)
        params = model.parameters()
        opt = {make}
        x, y = torch.randn(8, {k}), torch.randn(8, 1)
        for _ in range({steps}):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        """
    return _value(f"After {steps} steps of {label}, what is the loss?", code, "round(loss.item(), 4)")


def optimizer_state(rng: random.Random, name: str | None = None) -> dict:
    label, make = _optimizer(rng, name)
    code = f"""\
        w = nn.Parameter(torch.tensor([{rng.uniform(-2, 2):.2f}, {rng.uniform(-2, 2):.2f}]))
        params = [w]
        opt = {make}
        (w ** 2).sum().backward()
        opt.step()
        """
    ask = f"Which keys does {label}'s state hold for `w` after one step?"
    return _value(ask, code, "sorted(opt.state[w])")


def lbfgs(rng: random.Random) -> dict:
    code = f"""\
        w = nn.Parameter(torch.tensor([{rng.uniform(1, 3):.1f}, {rng.uniform(-3, -1):.1f}]))
        opt = torch.optim.LBFGS([w], lr=1, max_iter={rng.randint(3, 10)})
        def closure():
            opt.zero_grad()
            loss = ((w - torch.tensor([1.0, 2.0])) ** 2).sum()
            loss.backward()
            return loss
        opt.step(closure)
        """
    return _value("Where does LBFGS leave `w`?", code, "w.detach().round(decimals=3)")


def sparse_adam(rng: random.Random) -> dict:
    code = f"""\
        emb = nn.Embedding(10, 3, sparse=True)
        opt = torch.optim.SparseAdam(emb.parameters(), lr={_lr(rng)})
        before = emb.weight.detach().clone()
        emb(torch.tensor([{rng.randint(0, 9)}, {rng.randint(0, 9)}])).sum().backward()
        opt.step()
        """
    return _value("How many rows of the embedding moved?", code, "int((emb.weight != before).any(1).sum())")


def param_groups(rng: random.Random) -> dict:
    label, _ = _optimizer(rng)
    cls = label.split("_")[0]
    code = f"""\
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        opt = torch.optim.{cls}([
            {{"params": model[0].parameters(), "lr": {_lr(rng)}}},
            {{"params": model[2].parameters()}},
        ], lr={_lr(rng)})
        """
    ask = f"What are the learning rates of {cls}'s groups?"
    return _value(ask, code, "[g['lr'] for g in opt.param_groups]")


def scheduler(rng: random.Random, name: str | None = None) -> dict:
    name = name or rng.choice(sorted(SCHEDULERS))
    args, metric = SCHEDULERS[name]
    momentum = ", momentum=0.9" if name in ("CyclicLR", "OneCycleLR") else ""
    epochs = rng.randint(2, 6)
    step = "sched.step(loss.item())" if metric else "sched.step()"
    code = f"""\
        model = nn.Linear(2, 1)
        opt = torch.optim.SGD(model.parameters(), lr={_lr(rng)}{momentum})
        sched = torch.optim.lr_scheduler.{name}(opt, {args})
        lrs = []
        for epoch in range({epochs}):
            loss = model(torch.ones(1, 2)).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            {step}
            lrs.append(round(opt.param_groups[0]["lr"], 6))
        """
    return _value(f"Which learning rates does {name} give over {epochs} epochs?", code, "lrs")


def chained_schedulers(rng: random.Random) -> dict:
    kind = rng.choice(["SequentialLR", "ChainedScheduler"])
    args = "opt, [warm, decay], milestones=[2]" if kind == "SequentialLR" else "[warm, decay]"
    code = f"""\
        opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr={_lr(rng)})
        warm = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
        decay = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        sched = torch.optim.lr_scheduler.{kind}({args})
        lrs = []
        for _ in range({rng.randint(3, 6)}):
            opt.step()
            sched.step()
            lrs.append(round(opt.param_groups[0]["lr"], 6))
        """
    return _value(f"What does {kind} of warm-up and decay give?", code, "lrs")


def scheduler_state(rng: random.Random) -> dict:
    code = f"""\
        opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size={rng.randint(1, 3)})
        for _ in range({rng.randint(1, 5)}):
            opt.step()
            sched.step()
        state = sched.state_dict()
        """
    return _value("What is the scheduler's last epoch?", code, "state['last_epoch']")


def swa(rng: random.Random) -> dict:
    code = f"""\
        from torch.optim.swa_utils import AveragedModel, SWALR
        model = nn.Linear(2, 1)
        swa_model = AveragedModel(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        swa_sched = SWALR(opt, swa_lr={_lr(rng)})
        for _ in range({rng.randint(2, 4)}):
            opt.zero_grad()
            model(torch.ones(3, 2)).sum().backward()
            opt.step()
            swa_model.update_parameters(model)
            swa_sched.step()
        """
    return _value("How many models did SWA average?", code, "int(swa_model.n_averaged)")


def amp_scaler(rng: random.Random) -> dict:
    dtype = rng.choice(["bfloat16", "float16"])
    code = f"""\
        model = nn.Linear(4, 2)
        opt = torch.optim.{rng.choice(["SGD", "Adam", "AdamW"])}(model.parameters(), lr={_lr(rng)})
        scaler = torch.amp.GradScaler("cpu", init_scale={rng.choice([2.0**8, 2.0**16, 1024.0])})
        x = torch.randn(8, 4)
        with torch.autocast("cpu", dtype=torch.{dtype}):
            out = model(x)
            loss = out.float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        """
    return _value("What dtype had the output under autocast?", code, "str(out.dtype)")


def autocast_dtype(rng: random.Random) -> dict:
    op = rng.choice(["a @ b", "torch.mm(a, b)", "a + b", "torch.relu(a)", "a.sum()"])
    code = f"""\
        a, b = torch.randn(3, 3), torch.randn(3, 3)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            r = {op}
        """
    return _myth(f"Under CPU autocast, `{op}` computes in bfloat16.", code, "r.dtype == torch.bfloat16")


def scaler_state(rng: random.Random) -> dict:
    code = f"""\
        scaler = torch.amp.GradScaler("cpu", init_scale={rng.choice([8.0, 64.0, 1024.0])}, growth_interval=1)
        w = nn.Parameter(torch.ones(2))
        opt = torch.optim.SGD([w], lr=0.1)
        for _ in range({rng.randint(1, 3)}):
            opt.zero_grad()
            scaler.scale(w.sum()).backward()
            scaler.step(opt)
            scaler.update()
        """
    return _value("What is the scale after these steps?", code, "scaler.get_scale()")


def forward_hook(rng: random.Random) -> dict:
    width, batch = rng.randint(2, 6), rng.randint(1, 5)
    code = f"""\
        model = nn.Sequential(nn.Linear(3, {width}), nn.ReLU(), nn.Linear({width}, 1))
        shapes = []
        handle = model[1].register_forward_hook(lambda mod, inp, out: shapes.append(tuple(out.shape)))
        model(torch.randn({batch}, 3))
        handle.remove()
        model(torch.randn(2, 3))
        """
    return _value("Which output shapes did the hook record?", code, "shapes")


def backward_hook(rng: random.Random) -> dict:
    scale = rng.choice([0.5, 2.0, 10.0])
    code = f"""\
        w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w.register_hook(lambda g: g * {scale})
        (w ** 2).sum().backward()
        """
    return _value("What is `w.grad` with the hook?", code, "w.grad")


def module_backward_hook(rng: random.Random) -> dict:
    code = f"""\
        layer = nn.Linear(2, 2)
        seen = []
        layer.register_full_backward_hook(lambda mod, gin, gout: seen.append(len(gout)))
        layer.register_forward_pre_hook(lambda mod, args: seen.append("pre"))
        layer(torch.randn({rng.randint(1, 4)}, 2, requires_grad=True)).sum().backward()
        """
    return _value("What did the hooks record, in order?", code, "seen")


def grad_clip(rng: random.Random) -> dict:
    norm = rng.choice([0.1, 0.5, 1.0])
    code = f"""\
        model = nn.Linear(4, 1)
        (model(torch.full((2, 4), {rng.uniform(1, 5):.1f})) ** 2).sum().backward()
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm={norm})
        after = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        """
    return _myth(
        f"After `clip_grad_norm_(..., max_norm={norm})` the gradients' norm is at most {norm}.",
        code,
        f"after.item() <= {norm} + 1e-6",
    )


def custom_module(rng: random.Random) -> dict:
    hidden = rng.randint(2, 8)
    code = f"""\
        class Block(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.inner = nn.Linear(width, width)
                self.register_buffer("steps", torch.zeros(()))
                self.scale = nn.Parameter(torch.ones(width))
            def forward(self, x):
                self.steps += 1
                return self.inner(x) * self.scale + x
        block = Block({hidden})
        block(torch.randn(2, {hidden}))
        """
    return _value(
        "How many parameters (numbers) does `Block` hold, and how many buffers?",
        code,
        "(sum(p.numel() for p in block.parameters()), len(list(block.buffers())))",
    )


def state_dict_keys(rng: random.Random) -> dict:
    layers = rng.choice(
        ["nn.Linear(2, 3), nn.BatchNorm1d(3)", "nn.Conv1d(1, 2, 3), nn.ReLU()", "nn.LayerNorm(4)"]
    )
    code = f"""\
        model = nn.Sequential({layers})
        keys = list(model.state_dict())
        """
    return _value("Which keys does the state dict hold?", code, "keys")


def checkpoint_roundtrip(rng: random.Random) -> dict:
    code = f"""\
        import io
        model = nn.Linear(3, 1)
        opt = torch.optim.Adam(model.parameters(), lr={_lr(rng)})
        model(torch.ones(1, 3)).sum().backward()
        opt.step()
        buffer = io.BytesIO()
        torch.save({{"model": model.state_dict(), "opt": opt.state_dict()}}, buffer)
        buffer.seek(0)
        loaded = torch.load(buffer)
        fresh = torch.optim.Adam(nn.Linear(3, 1).parameters(), lr=1.0)
        fresh.load_state_dict(loaded["opt"])
        """
    return _value("What learning rate has the optimizer after loading?", code, "fresh.param_groups[0]['lr']")


def func_grad(rng: random.Random) -> dict:
    fn = rng.choice(["torch.sin(x).sum()", "(x ** 3).sum()", "torch.exp(x).mean()", "(x * x).sum()"])
    code = f"""\
        from torch.func import grad
        x = torch.tensor([{rng.uniform(-1, 1):.2f}, {rng.uniform(-1, 1):.2f}])
        g = grad(lambda x: {fn})(x)
        """
    return _value(f"What is the gradient of `{fn}`?", code, "g")


def func_vmap(rng: random.Random) -> dict:
    code = f"""\
        from torch.func import vmap, jacrev
        f = lambda x: x.sin() * {rng.randint(1, 4)}
        jac = vmap(jacrev(f))(torch.randn({rng.randint(2, 5)}, 3))
        """
    return _value("What is the shape of the batched Jacobian?", code, "jac.shape")


def functional_call(rng: random.Random) -> dict:
    code = f"""\
        from torch.func import functional_call
        model = nn.Linear(2, 1)
        params = {{k: torch.ones_like(v) * {rng.randint(1, 3)} for k, v in model.named_parameters()}}
        out = functional_call(model, params, (torch.ones(1, 2),))
        """
    return _value("What does the call with replaced parameters give?", code, "out.item()")


def ddp_gloo(rng: random.Random) -> dict:
    code = f"""\
        import os, tempfile
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        store = os.path.join(tempfile.mkdtemp(), "store")
        dist.init_process_group("gloo", init_method=f"file://{{store}}", rank=0, world_size=1)
        try:
            model = DDP(nn.Linear({rng.randint(2, 4)}, 1))
            loss = model(torch.ones(2, model.module.in_features)).sum()
            loss.backward()
            world = dist.get_world_size()
            grad = model.module.bias.grad.item()
        finally:
            dist.destroy_process_group()
        """
    return _value("With one process, what is the bias gradient after DDP's backward?", code, "(world, grad)")


def ddp_all_reduce(rng: random.Random) -> dict:
    op = rng.choice(["SUM", "MAX", "MIN"])
    code = f"""\
        import os, tempfile
        import torch.distributed as dist
        store = os.path.join(tempfile.mkdtemp(), "store")
        dist.init_process_group("gloo", init_method=f"file://{{store}}", rank=0, world_size=1)
        t = torch.tensor([{rng.randint(1, 9)}.0, {rng.randint(1, 9)}.0])
        dist.all_reduce(t, op=dist.ReduceOp.{op})
        dist.destroy_process_group()
        """
    return _value(f"What does all_reduce({op}) give in a world of one?", code, "t")


def dataloader(rng: random.Random) -> dict:
    n, batch = rng.randint(5, 12), rng.randint(2, 4)
    drop = rng.choice([True, False])
    code = f"""\
        from torch.utils.data import DataLoader, TensorDataset
        data = TensorDataset(torch.arange({n}.0).unsqueeze(1), torch.zeros({n}))
        loader = DataLoader(data, batch_size={batch}, shuffle=True, drop_last={drop})
        sizes = [len(x) for x, _ in loader]
        """
    return _value(f"Which batch sizes does the loader give (drop_last={drop})?", code, "sizes")


def no_grad_eval(rng: random.Random) -> dict:
    code = f"""\
        model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(p={rng.choice([0.2, 0.5])}))
        model.eval()
        with torch.no_grad():
            out = model(torch.ones(2, 3))
        """
    return _myth("Outputs computed under `torch.no_grad()` still require grad.", code, "out.requires_grad")


def accumulation(rng: random.Random) -> dict:
    micro = rng.randint(2, 4)
    code = f"""\
        w = nn.Parameter(torch.tensor({rng.uniform(0.5, 2):.2f}))
        opt = torch.optim.SGD([w], lr=0.1)
        opt.zero_grad()
        for i in range({micro}):
            loss = (w * (i + 1)) / {micro}
            loss.backward()
        """
    return _value(f"What is `w.grad` after {micro} accumulated micro-batches?", code, "w.grad.item()")


def init_weights(rng: random.Random) -> dict:
    init = rng.choice(["nn.init.zeros_", "nn.init.ones_", "lambda t: nn.init.constant_(t, 0.5)"])
    code = f"""\
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 1))
        for m in model.modules():
            if isinstance(m, nn.Linear):
                ({init})(m.weight)
        """
    return _value("What is the sum of the second layer's weights?", code, "model[1].weight.sum().item()")


def basic_print(rng: random.Random) -> dict:
    label, make = _optimizer(rng)
    code = f"""\
        params = [nn.Parameter(torch.zeros(2))]
        opt = {make}
        print(type(opt).__name__, sorted(opt.defaults)[:3])
        """
    return {
        "kind": "basic",
        "front": f"Which defaults does {label} take?",
        "back": "Its printed defaults (below).",
        "code": textwrap.dedent(code),
    }


def basic_hooks(rng: random.Random) -> dict:
    code = f"""\
        layer = nn.Linear(2, 2)
        h = layer.register_forward_hook(lambda m, i, o: None)
        print(len(layer._forward_hooks), {rng.randint(0, 9)})
        h.remove()
        """
    return {
        "kind": "basic",
        "front": "How do you remove a forward hook?",
        "back": "Keep the handle `register_forward_hook` returns and call `handle.remove()`.",
        "code": textwrap.dedent(code),
    }


def _value(ask: str, code: str, expr: str) -> dict:
    return {"kind": "value", "ask": ask, "code": textwrap.dedent(code), "answer_expr": expr}


def _myth(claim: str, proof: str, holds: str) -> dict:
    return {"kind": "myth", "claim": claim, "proof": textwrap.dedent(proof), "holds": holds}


TEMPLATES: list[Callable[[random.Random], dict]] = [
    optimizer_steps,
    optimizer_state,
    lbfgs,
    sparse_adam,
    param_groups,
    scheduler,
    chained_schedulers,
    scheduler_state,
    swa,
    amp_scaler,
    autocast_dtype,
    scaler_state,
    forward_hook,
    backward_hook,
    module_backward_hook,
    grad_clip,
    custom_module,
    state_dict_keys,
    checkpoint_roundtrip,
    func_grad,
    func_vmap,
    functional_call,
    ddp_gloo,
    ddp_all_reduce,
    dataloader,
    no_grad_eval,
    accumulation,
    init_weights,
    basic_print,
    basic_hooks,
]


def make_cards(n: int, seed: int = CORPUS_SEED) -> list[dict]:
    """n cards: first one of every optimizer and every scheduler, then one of every template, then
    templates drawn at random (all from `seed`)."""
    rng = random.Random(seed)
    cards: list[dict] = []
    for name in sorted(OPTIMIZERS):
        cards.append(optimizer_steps(rng, name))
    for name in sorted(SCHEDULERS):
        cards.append(scheduler(rng, name))
    cards += [template(rng) for template in TEMPLATES]
    while len(cards) < n:
        cards.append(rng.choice(TEMPLATES)(rng))
    return [{"id": f"corpus-{i}", **card} for i, card in enumerate(cards[:n])]


class _Dumper(yaml.SafeDumper):
    """Snippets as literal blocks (`code: |`), as people write them."""


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


_Dumper.add_representer(str, _text)


def write_project(root: Path, cards: list[dict]) -> list[Path]:
    """The cards as one deck in files of DECK_SIZE cards under root/cards; returns the files."""
    (root / "cards").mkdir(parents=True, exist_ok=True)
    files = []
    for d in range(0, len(cards), DECK_SIZE):
        head = {"deck": "Corpus", "setup": SETUP} if d == 0 else {"continues": "Corpus"}
        path = root / "cards" / f"corpus-{d // DECK_SIZE + 1}.yaml"
        part = {**head, "cards": cards[d : d + DECK_SIZE]}
        path.write_text(yaml.dump(part, Dumper=_Dumper, sort_keys=False))
        files.append(path)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="the project folder to write (its cards/ folder)")
    parser.add_argument("--cards", type=int, default=400)
    parser.add_argument("--seed", type=int, default=CORPUS_SEED)
    args = parser.parse_args()
    for path in write_project(args.out, make_cards(args.cards, args.seed)):
        print(path)


if __name__ == "__main__":
    main()
