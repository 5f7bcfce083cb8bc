"""Cards in shapes neither bench/corpus_cards.py nor the tests' decks hold, for the build cache: snippets
that warn, print, set torch's global switches (default dtype, `torch.backends` flags, print options,
deterministic algorithms) and leave them set, seed every generator, use dropout, define classes
(modules, `autograd.Function`s, dataclasses), close over variables, run double backward, checkpoint,
parametrize, trace with torch.fx, script with TorchScript, use attention, RNNs, distributions,
saved-tensor hooks, DDP on gloo set up the tutorials' way (`MASTER_ADDR`/`MASTER_PORT` in os.environ),
and a data loader with worker processes.

Seeded apart from every other generator (UNSEEN_SEED, 4217): bench/corpus_cards.py uses 2111, the order
corpora 21 and 2100. The same seed gives the same cards.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable

import yaml

UNSEEN_SEED = 4217
SETUP = "import torch\nimport torch.nn as nn\n"


def _value(ask: str, code: str, expr: str) -> dict:
    return {"kind": "value", "ask": ask, "code": textwrap.dedent(code), "answer_expr": expr}


def _raises(ask: str, code: str, error: str) -> dict:
    return {"kind": "value", "ask": ask, "code": textwrap.dedent(code), "answer": {"raises": error}}


def warns(rng: random.Random) -> dict:
    how = rng.choice(
        [
            "warnings.warn('lr too high', UserWarning)",
            "warnings.simplefilter('error'); warnings.simplefilter('default')",
            "warnings.filterwarnings('ignore', category=DeprecationWarning)",
            "torch.nn.utils.clip_grad_norm(model.parameters(), 1.0)" if rng.random() < 0.5 else "pass",
        ]
    )
    code = f"""\
        import warnings
        model = nn.Linear({rng.randint(2, 5)}, 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            {how}
        {how}
        n = len(caught)
        """
    return _value("How many warnings were caught?", code, "n")


def prints(rng: random.Random) -> dict:
    code = f"""\
        torch.set_printoptions(precision={rng.randint(1, 3)}, sci_mode=False)
        t = torch.linspace(0, 1, {rng.randint(3, 6)})
        print(t)
        print("mean", t.mean().item())
        """
    return _value("What is the mean?", code, "round(t.mean().item(), 4)")


def default_dtype(rng: random.Random) -> dict:
    dtype = rng.choice(["float64", "float16", "bfloat16"])
    code = f"""\
        torch.set_default_dtype(torch.{dtype})
        layer = nn.Linear({rng.randint(2, 4)}, 2)
        x = torch.ones(1, layer.in_features)
        """
    return _value(
        f"With the default dtype {dtype}, what dtype has the layer's weight?", code, "str(layer.weight.dtype)"
    )


def backends_flags(rng: random.Random) -> dict:
    flag = rng.choice(
        [
            "torch.backends.cudnn.benchmark = True",
            "torch.backends.cudnn.deterministic = True",
            "torch.backends.cuda.matmul.allow_tf32 = True",
            "torch.backends.cudnn.allow_tf32 = False",
            "torch.backends.mkldnn.enabled = False",
            "torch.set_float32_matmul_precision('medium')",
            "torch.backends.opt_einsum.enabled = False",
        ]
    )
    code = f"""\
        {flag}
        a = torch.randn({rng.randint(2, 4)}, 3)
        r = torch.einsum("ij,kj->ik", a, a)
        """
    return _value(f"After `{flag}`, what shape has r?", code, "tuple(r.shape)")


def deterministic(rng: random.Random) -> dict:
    code = f"""\
        torch.use_deterministic_algorithms(True, warn_only={rng.choice([True, False])})
        torch.autograd.set_detect_anomaly(True)
        w = torch.ones({rng.randint(2, 4)}, requires_grad=True)
        (w * 3).sum().backward()
        """
    return _value("What is w.grad?", code, "w.grad.tolist()")


def seeded_dropout(rng: random.Random) -> dict:
    p = rng.choice([0.25, 0.5, 0.75])
    code = f"""\
        import random
        import numpy as np
        random.seed({rng.randint(0, 99)}); np.random.seed({rng.randint(0, 99)})
        torch.manual_seed({rng.randint(0, 99)})
        drop = nn.Dropout(p={p})
        kept = int((drop(torch.ones(100)) != 0).sum())
        g = torch.Generator().manual_seed(7)
        pick = torch.randint(0, 10, (3,), generator=g).tolist()
        pick += [random.randint(0, 9), int(np.random.randint(9))]
        """
    return _value(f"How many of 100 ones survive Dropout(p={p})?", code, "(kept, pick)")


def autograd_function(rng: random.Random) -> dict:
    k = rng.randint(2, 5)
    code = f"""\
        class Clamp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clamp(min=0)
            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * (x > 0) * {k}
        x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        Clamp.apply(x).sum().backward()
        """
    return _value("What is x.grad through the custom Function?", code, "x.grad.tolist()")


def dataclass_config(rng: random.Random) -> dict:
    code = f"""\
        from dataclasses import dataclass, field
        @dataclass
        class Config:
            lr: float = {rng.choice([0.1, 0.01])}
            betas: tuple = (0.9, 0.999)
            groups: list = field(default_factory=list)
        cfg = Config()
        model = nn.Linear(2, 2)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=cfg.betas)
        """
    return _value("What are the optimizer's betas?", code, "opt.param_groups[0]['betas']")


def closure_counter(rng: random.Random) -> dict:
    n = rng.randint(2, 5)
    code = f"""\
        calls = 0
        def make_loss(w):
            def loss_fn():
                global calls
                calls += 1
                return (w ** 2).sum()
            return loss_fn
        w = nn.Parameter(torch.tensor([1.5, -0.5]))
        opt = torch.optim.LBFGS([w], max_iter={n})
        f = make_loss(w)
        def closure():
            opt.zero_grad(); loss = f(); loss.backward(); return loss
        opt.step(closure)
        """
    return _value("How many times did LBFGS call the loss?", code, "calls")


def double_backward(rng: random.Random) -> dict:
    code = f"""\
        x = torch.tensor({rng.uniform(0.5, 2):.2f}, requires_grad=True)
        y = x ** {rng.randint(2, 4)}
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (h,) = torch.autograd.grad(g, x)
        """
    return _value("What is the second derivative?", code, "round(h.item(), 4)")


def leaf_view_inplace(rng: random.Random) -> dict:
    op = rng.choice(["v.add_(1)", "v.mul_(2)", "v.zero_()"])
    code = f"""\
        w = torch.ones({rng.randint(2, 5)}, requires_grad=True)
        v = w[:2]
        {op}
        """
    return _raises(f"What does `{op}` on a view of a leaf do?", code, "RuntimeError")


def checkpointed(rng: random.Random) -> dict:
    code = f"""\
        from torch.utils.checkpoint import checkpoint
        torch.manual_seed({rng.randint(0, 9)})
        block = nn.Sequential(nn.Linear(3, 3), nn.GELU(), nn.Dropout(0.1))
        x = torch.randn(2, 3, requires_grad=True)
        out = checkpoint(block, x, use_reentrant=False)
        out.sum().backward()
        """
    return _value("What shape has x.grad?", code, "tuple(x.grad.shape)")


def parametrized(rng: random.Random) -> dict:
    how = rng.choice(["spectral", "weight_norm", "orthogonal", "prune"])
    code = {
        "spectral": "layer = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4))",
        "weight_norm": "layer = nn.utils.parametrizations.weight_norm(nn.Linear(4, 4))",
        "orthogonal": "layer = nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))",
        "prune": "import torch.nn.utils.prune\nlayer = nn.Linear(4, 4)\n"
        "nn.utils.prune.l1_unstructured(layer, 'weight', amount=0.5)",
    }[how]
    body = f"torch.manual_seed({rng.randint(0, 9)})\n{code}\nlayer(torch.ones(1, 4)).sum().backward()\n"
    return _value(
        f"Which parameters does {how} leave?", body, "sorted(n for n, _ in layer.named_parameters())"
    )


def fx_trace(rng: random.Random) -> dict:
    code = f"""\
        import torch.fx
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(3, {rng.randint(2, 4)})
            def forward(self, x):
                return torch.relu(self.a(x)).sum(-1)
        gm = torch.fx.symbolic_trace(M())
        ops = [n.op for n in gm.graph.nodes]
        """
    return _value("Which node kinds does the traced graph hold?", code, "ops")


def scripted(rng: random.Random) -> dict:
    code = f"""\
        @torch.jit.script
        def f(x: torch.Tensor, k: int) -> torch.Tensor:
            for _ in range(k):
                x = x * 2
            return x
        r = f(torch.ones(2), {rng.randint(1, 4)})
        """
    return _value("What does the scripted loop return?", code, "r.tolist()")


def attention(rng: random.Random) -> dict:
    heads = rng.choice([1, 2])
    code = f"""\
        torch.manual_seed({rng.randint(0, 9)})
        mha = nn.MultiheadAttention(4, {heads}, batch_first=True)
        x = torch.randn(2, 3, 4)
        out, weights = mha(x, x, x, need_weights=True)
        sdpa = nn.functional.scaled_dot_product_attention(x, x, x, is_causal=True)
        layer = nn.TransformerEncoderLayer(4, {heads}, dim_feedforward=8, batch_first=True)
        layer.eval()
        enc = layer(x)
        """
    return _value(
        "What shapes do the attention weights and the encoder give?",
        code,
        "(tuple(weights.shape), tuple(enc.shape))",
    )


def rnn_packed(rng: random.Random) -> dict:
    cell = rng.choice(["LSTM", "GRU", "RNN"])
    code = f"""\
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
        rnn = nn.{cell}(2, 3, batch_first=True)
        x = torch.randn(2, 4, 2)
        packed = pack_padded_sequence(x, torch.tensor([4, {rng.randint(1, 3)}]), batch_first=True)
        out, _ = rnn(packed)
        padded, lengths = pad_packed_sequence(out, batch_first=True)
        """
    return _value(f"Which lengths does {cell} give back?", code, "lengths.tolist()")


def distributions(rng: random.Random) -> dict:
    code = f"""\
        from torch.distributions import Normal, kl_divergence
        torch.manual_seed({rng.randint(0, 9)})
        mu = torch.tensor(0.0, requires_grad=True)
        d = Normal(mu, {rng.choice([0.5, 1.0, 2.0])})
        s = d.rsample((4,))
        s.sum().backward()
        kl = kl_divergence(d, Normal(1.0, 1.0)).item()
        """
    return _value("What gradient does rsample give mu, and the KL?", code, "(mu.grad.item(), round(kl, 4))")


def saved_tensor_hooks(rng: random.Random) -> dict:
    code = f"""\
        packed = []
        def pack(t):
            packed.append(tuple(t.shape))
            return t
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            w = torch.ones({rng.randint(2, 4)}, requires_grad=True)
            y = (w * w).sin().sum()
        y.backward()
        """
    return _value("Which shapes were packed?", code, "packed")


def global_module_hook(rng: random.Random) -> dict:
    code = f"""\
        from torch.nn.modules.module import register_module_forward_hook
        seen = []
        handle = register_module_forward_hook(lambda m, i, o: seen.append(type(m).__name__))
        nn.Sequential(nn.Linear(2, 2), nn.ReLU())(torch.ones(1, 2))
        handle.remove()
        optimizer_hooks = []
        w = nn.Parameter(torch.ones(2))
        opt = torch.optim.{rng.choice(["SGD", "Adam"])}([w], lr=0.1)
        h = opt.register_step_post_hook(lambda o, a, k: optimizer_hooks.append(1))
        w.sum().backward(); opt.step(); h.remove()
        """
    return _value("Which modules did the global hook see?", code, "(seen, optimizer_hooks)")


def ddp_env(rng: random.Random) -> dict:
    code = f"""\
        import os
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "{rng.randint(20000, 40000)}"
        dist.init_process_group("gloo", rank=0, world_size=1)
        model = DDP(nn.Linear(2, 1))
        model(torch.ones(3, 2)).sum().backward()
        grad = model.module.bias.grad.item()
        dist.destroy_process_group()
        """
    return _value("What bias gradient does DDP give in a world of one?", code, "grad")


def loader_workers(rng: random.Random) -> dict:
    code = f"""\
        from torch.utils.data import DataLoader, TensorDataset
        data = TensorDataset(torch.arange({rng.randint(4, 9)}.0))
        loader = DataLoader(data, batch_size=2, num_workers=2)
        sizes = [len(b[0]) for b in loader]
        """
    return _value("Which batch sizes does the loader give?", code, "sizes")


def inference_mode(rng: random.Random) -> dict:
    how = rng.choice(["torch.inference_mode()", "torch.no_grad()", "torch.enable_grad()"])
    code = f"""\
        model = nn.Linear(2, 2)
        with {how}:
            out = model(torch.ones(1, 2))
        torch.set_grad_enabled({rng.choice([True, False])})
        """
    return _value(f"Does the output under `{how}` require grad?", code, "out.requires_grad")


def func_transforms(rng: random.Random) -> dict:
    how = rng.choice(["hessian", "jacfwd", "jvp"])
    code = {
        "hessian": "from torch.func import hessian\nr = hessian(lambda x: (x ** 3).sum())(torch.ones(2))",
        "jacfwd": "from torch.func import jacfwd\nr = jacfwd(torch.sin)(torch.zeros(3))",
        "jvp": "from torch.func import jvp\n_, r = jvp(torch.exp, (torch.zeros(2),), (torch.ones(2),))",
    }[how]
    return _value(f"What does {how} give?", code + "\n", "r.tolist()")


def mutates_module_global(rng: random.Random) -> dict:
    """A snippet's own globals are its namespace; these are mutated in place and rebound."""
    code = f"""\
        history = []
        LR = {rng.choice([0.1, 0.01])}
        def record(x):
            global LR
            LR = LR * 0.5
            history.append(x)
        for i in range({rng.randint(2, 4)}):
            record(i)
        """
    return _value("What is LR after the calls?", code, "(LR, history)")


TEMPLATES: list[Callable[[random.Random], dict]] = [
    warns,
    prints,
    default_dtype,
    backends_flags,
    deterministic,
    seeded_dropout,
    autograd_function,
    dataclass_config,
    closure_counter,
    double_backward,
    leaf_view_inplace,
    checkpointed,
    parametrized,
    fx_trace,
    scripted,
    attention,
    rnn_packed,
    distributions,
    saved_tensor_hooks,
    global_module_hook,
    ddp_env,
    loader_workers,
    inference_mode,
    func_transforms,
    mutates_module_global,
]


def make_cards(n: int, seed: int = UNSEEN_SEED) -> list[dict]:
    """n cards: one of every template first, then templates drawn at random (all from `seed`)."""
    rng = random.Random(seed)
    cards = [template(rng) for template in TEMPLATES]
    while len(cards) < n:
        cards.append(rng.choice(TEMPLATES)(rng))
    return [{"id": f"unseen-{i}", **card} for i, card in enumerate(cards[:n])]


class _Dumper(yaml.SafeDumper):
    """Snippets as literal blocks (`code: |`), as people write them."""


_Dumper.add_representer(
    str,
    lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None),
)


def deck_text(cards: list[dict]) -> str:
    """One card file holding `cards` as a deck."""
    return yaml.dump({"deck": "Unseen", "setup": SETUP, "cards": cards}, Dumper=_Dumper, sort_keys=False)
