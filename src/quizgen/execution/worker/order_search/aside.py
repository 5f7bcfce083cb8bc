"""Variables only the check reads, set aside by the fast search (order.tree): shared by every branch,
neither copied nor compared, where no step can reach their objects (in a worker; imports torch)."""

from __future__ import annotations

from collections.abc import Iterable

from quizgen.execution.worker.order_search import program_state as order_state


def apart(ns: dict[str, object], steps: Iterable[str], aside: Iterable[str]) -> tuple[object, ...] | None:
    """The fingerprint of the variables `aside` when no object reachable from them is reachable from
    the variables `steps` (imported objects aside) and neither reaches a class or function the card
    defined (whose insides the walk does not see); else None."""
    walks = []
    for names in (steps, aside):
        walk = order_state._Walk(copying=False, shared=order_state.Shared())
        try:
            order_state._capture(walk, ns, sorted(set(names) & set(ns)), names)
        except (order_state.Opaque, RecursionError):
            return None
        if walk.shared is not None and walk.shared.seen:  # (a class or function of the card's)
            return None
        walks.append(walk)
    one, other = walks
    addresses = one.addresses() | other.addresses()
    if (set(one.memo) - one.imported) & set(other.memo) or addresses & {*one.memo, *other.memo}:
        return None  # shared objects, or an int that may be the id() of an object on the other side
    return other.digest()
