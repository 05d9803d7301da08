"""``bench fuzz N``: feed N mutated corpus files to the codecs and count the outcomes.

Each input is accepted, refused with a typed error, or crashed (anything else, which is a
bug); the slowest input and the peak memory are reported too.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time
from pathlib import Path
from typing import Any

from engine import codec
from engine.errors import EgnError

from .corpus import default_corpus

__all__ = ["mutate", "mutate_json", "fuzz_one", "fuzz_seeds", "HELP", "add_arguments", "run"]

HELP = "feed N mutated files to the codecs; count accepted/refused, slowest input"

def mutate(data: bytes, rng: random.Random, others: list[bytes] | None = None) -> bytes:
    """One random structural mutation of ``data`` (bit flips, splices, truncation, ...)."""
    buf = bytearray(data)
    kind = rng.randrange(9)
    n = len(buf)
    if kind == 0 and n:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(n)
            buf[i] ^= 1 << rng.randrange(8)
    elif kind == 1 and n:
        i = rng.randrange(n)
        buf[i] = rng.choice((0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, rng.randrange(256)))
    elif kind == 2 and n:
        i = rng.randrange(n)
        del buf[i : i + rng.randint(1, 16)]
    elif kind == 3:
        i = rng.randrange(n + 1)
        buf[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    elif kind == 4 and n:
        buf = buf[: rng.randrange(n)]
    elif kind == 5 and n:
        i = rng.randrange(n)
        j = min(n, i + rng.randint(1, 64))
        buf[j:j] = buf[i:j] * rng.randint(1, 4)
    elif kind == 6 and n:
        buf[0] = rng.choice((0x00, 0x01, 0x02, 0x0A, 0x7B))
    elif kind == 7 and others:
        other = rng.choice(others)
        i = rng.randrange(n + 1)
        j = rng.randrange(len(other) + 1)
        buf = buf[:i] + other[j:]
    elif n:
        # Inflate a varint length or count: the shape hostile files use to ask for memory.
        i = rng.randrange(n)
        buf[i : i + 1] = bytes([0xFF, 0xFF, 0xFF, 0x7F])
    return bytes(buf)


_ODD_VALUES: tuple[Any, ...] = (
    0, -1, 1, 3, 4, 7, 8, 9, 255, 256, 65536, 2**31, -(2**31), 2**53 + 1, 1.5, 1e21,
    "", "Pass", "Order", "n", "x", "s", "9s", "Jd", "Xx", "B", "R", "00", "\ud800", "é" * 70,
    True, False, None, [], {}, ["Pass"], ["9s", "Ts"], {"0": ["[!] ok"]}, {"300": ["x"]},
)


def mutate_json(data: bytes, rng: random.Random) -> bytes:
    """Replace, delete or duplicate one node of a JSON document (keeps the text parseable)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return mutate(data, rng)
    nodes: list[tuple[Any, Any]] = []
    stack: list[Any] = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            nodes.append((node, key))
            stack.append(value)
    if not nodes:
        return mutate(data, rng)
    parent, key = rng.choice(nodes)
    action = rng.randrange(4)
    if action == 0 and isinstance(parent, dict):
        del parent[key]
    elif action == 1 and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif action == 2 and isinstance(parent, dict):
        parent[rng.choice(("isAlone", "aloneDefender", "discard", "playerCards", "x", "00"))] = rng.choice(_ODD_VALUES)
    else:
        parent[key] = rng.choice(_ODD_VALUES)
    return json.dumps(doc).encode("utf-8", "surrogatepass")


def fuzz_one(data: bytes) -> str:
    """Run one input through every reader and writer: ``"accepted"`` or ``"refused"``.

    Anything but a typed :class:`~engine.errors.EgnError` propagates (that is a bug).
    """
    try:
        if codec.is_binary(data):
            doc = codec.decode_emn(data) if data[:1] == b"\x02" else codec.decode_bytes(data)
        else:
            obj = codec.parse_json_text(data)
            if not isinstance(obj, dict):
                return "refused"
            doc = obj
        if doc.get("fileType") == "Euchre Match Notation":
            codec.encode_emn(doc)
        else:
            codec.encode_condensed(doc)
            codec.encode_expanded(doc)
            codec.baseline_hash(doc)
    except EgnError:
        return "refused"
    return "accepted"


def fuzz_seeds(folder: Path) -> list[bytes]:
    """Corpus files to mutate: every binary and JSON game or match under ``folder``."""
    seeds = []
    for pattern in ("*.egnb", "*.emnb", "*.egn", "*.emn"):
        seeds += [p.read_bytes() for p in sorted(folder.rglob(pattern))]
    return seeds


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("n", type=int, help="number of mutated inputs")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same inputs)")
    p.add_argument("--corpus", type=Path, default=None, help="folder of seed files (default: shared fixtures)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = args.corpus or default_corpus()
    seeds = fuzz_seeds(folder)
    if not seeds:
        raise OSError(f"no seed files under {folder}")
    rng = random.Random(args.seed)
    counts = {"accepted": 0, "refused": 0, "crashed": 0}
    slowest, slowest_at = 0.0, -1
    crashes: list[str] = []
    start = time.perf_counter()
    for i in range(args.n):
        data = seeds[rng.randrange(len(seeds))]
        for _ in range(rng.randint(1, 3)):
            if codec.is_binary(data) or rng.random() < 0.3:
                data = mutate(data, rng, seeds)
            else:
                data = mutate_json(data, rng)
        t0 = time.perf_counter()
        try:
            counts[fuzz_one(data)] += 1
        except Exception as exc:  # a crash is what this benchmark exists to find
            counts["crashed"] += 1
            if len(crashes) < 5:
                crashes.append(f"input {i}: {type(exc).__name__}: {exc}"[:300])
        took = time.perf_counter() - t0
        if took > slowest:
            slowest, slowest_at = took, i
    return {
        "inputs": args.n,
        "seed": args.seed,
        **counts,
        "slowest_s": round(slowest, 6),
        "slowest_input": slowest_at,
        "total_s": round(time.perf_counter() - start, 3),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "crashes": crashes,
    }
