"""``bench codecs``: encode/decode throughput of the condensed and expanded binary forms.

Encodes and decodes every game of a corpus (by default the shared reference fixtures beside
the clone, else the bundled demo game) in both binary forms and prints the median throughput
over several runs, through the public API (with schema validation) and through the raw codec
(without).
"""

from __future__ import annotations

import argparse
import json
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

from .corpus import default_corpus

__all__ = ["load_corpus", "add_arguments", "run"]

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


HELP = "encode/decode throughput of the condensed and expanded forms"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", type=Path, default=None, help="folder of .egn files (default: shared fixtures)")
    p.add_argument("--runs", type=int, default=5, help="passes over the corpus; the median is printed")


def run(args: argparse.Namespace) -> dict[str, Any]:
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
