"""Benchmarks of the EGN codecs: ``bench codecs`` (throughput) and ``bench fuzz N`` (robustness).

``bench codecs`` encodes and decodes every game of a corpus (by default the shared reference
fixtures beside the clone, else the bundled demo game) in both binary forms and prints the
median throughput over several runs, through the public API (with schema validation) and
through the raw codec (without).  ``bench fuzz N`` feeds N mutated corpus files to the
decoders and encoders and counts how many were accepted, refused with a typed error, or
crashed (anything else, which is a bug).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine import codec
from engine.codec.condensed import decode_condensed_body, encode_condensed_body
from engine.codec.deal_bits import unpack_deal
from engine.codec.expanded import read_deal, read_file, write_deal, write_file
from engine.errors import EgnError
from overlay.cli import bench_target

__all__ = ["default_corpus", "load_corpus", "mutate", "mutate_json", "fuzz_one", "fuzz_seeds", "bench_codecs", "bench_fuzz"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "fixtures" / "egn"
DEMO = ROOT / "assets" / "demo"


def default_corpus() -> Path:
    """The shared reference fixtures when present, else the bundled demo games."""
    return SHARED if SHARED.is_dir() else DEMO


def load_corpus(folder: Path) -> list[dict[str, Any]]:
    """Every ``.egn`` under ``folder`` that both binary forms write and read back.

    (Games whose condensed stream the reference itself cannot read back, such as the
    documented g124/q13 bug, are left out: their decode is refused by design.)
    """
    docs = []
    for path in sorted(folder.rglob("*.egn")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            codec.decode_bytes(codec.encode_condensed(doc, source=str(path)))
            codec.decode_bytes(codec.encode_expanded(doc, source=str(path)))
        except (EgnError, ValueError):
            continue
        docs.append(doc)
    return docs


def _rates(cases: list[tuple[str, Callable[[], int]]], runs: int, games: int) -> dict[str, tuple[float, float]]:
    """Median games/s and MB/s of each case over ``runs`` passes; each ``fn`` returns the bytes it handled.

    One untimed warm-up pass first; then the cases take turns pass by pass, so a burst of
    load from another process on a shared machine spreads over all of them instead of
    landing on one.
    """
    for _name, fn in cases:
        fn()
    per_game: dict[str, list[float]] = {name: [] for name, _ in cases}
    per_mb: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(runs):
        for name, fn in cases:
            start = time.perf_counter()
            size = fn()
            elapsed = max(time.perf_counter() - start, 1e-9)
            per_game[name].append(games / elapsed)
            per_mb[name].append(size / elapsed / 1e6)
    return {name: (statistics.median(per_game[name]), statistics.median(per_mb[name])) for name, _ in cases}


def _add_codecs_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", type=Path, default=None, help="folder of .egn files (default: shared fixtures)")
    p.add_argument("--runs", type=int, default=5, help="passes over the corpus; the median is printed")


@bench_target("codecs", help="encode/decode throughput of the condensed and expanded forms", add_arguments=_add_codecs_args)
def bench_codecs(args: argparse.Namespace) -> dict[str, Any]:
    folder = args.corpus or default_corpus()
    docs = load_corpus(folder)
    if not docs:
        raise OSError(f"no encodable .egn files under {folder}")
    runs = max(1, args.runs)
    cond = [codec.encode_condensed(d) for d in docs]
    expd = [codec.encode_expanded(d) for d in docs]
    cbytes, ebytes = sum(map(len, cond)), sum(map(len, expd))

    def enc(fn: Callable[..., bytes]) -> Callable[[], int]:
        return lambda: sum(len(fn(d)) for d in docs)

    def dec(fn: Callable[..., Any], blobs: list[bytes], size: int) -> Callable[[], int]:
        def run() -> int:
            for b in blobs:
                fn(b)
            return size

        return run

    def raw_expanded(doc: dict[str, Any]) -> bytes:
        return write_file(doc, lambda i, d: write_deal(unpack_deal(d, i) if isinstance(d, str) else d))

    figures: dict[str, Any] = {"corpus": str(folder), "games": len(docs), "runs": runs,
                               "condensed_bytes": cbytes, "expanded_bytes": ebytes}
    cases: list[tuple[str, Callable[[], int]]] = [
        ("condensed_encode", enc(codec.encode_condensed)),
        ("condensed_decode", dec(codec.decode_condensed, cond, cbytes)),
        ("expanded_encode", enc(codec.encode_expanded)),
        ("expanded_decode", dec(codec.decode_expanded, expd, ebytes)),
        ("raw_condensed_encode", enc(encode_condensed_body)),
        ("raw_condensed_decode", dec(lambda b: decode_condensed_body(b[1:], 1), cond, cbytes)),
        ("raw_expanded_encode", enc(raw_expanded)),
        ("raw_expanded_decode", dec(lambda b: read_file(b[1:], 1, lambda _i, p, o: read_deal(p, o)), expd, ebytes)),
    ]
    for name, (games_s, mb_s) in _rates(cases, runs, len(docs)).items():
        figures[f"{name}_games_per_s"] = round(games_s, 1)
        figures[f"{name}_mb_per_s"] = round(mb_s, 3)
    return figures


# --- fuzzing -----------------------------------------------------------------------------


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


def _add_fuzz_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("n", type=int, help="number of mutated inputs")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same inputs)")
    p.add_argument("--corpus", type=Path, default=None, help="folder of seed files (default: shared fixtures)")


@bench_target("fuzz", help="feed N mutated files to the codecs; count accepted/refused, slowest input", add_arguments=_add_fuzz_args)
def bench_fuzz(args: argparse.Namespace) -> dict[str, Any]:
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
