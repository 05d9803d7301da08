"""``bench codecs``: encode/decode throughput of the condensed and expanded forms, optionally
side by side with the reference ``euchre-game-notation`` package.

What each side times, per game (the corpus is parsed from JSON once, before any timing):

- ours, ``*_encode``: :func:`engine.codec.encode_condensed` / ``encode_expanded`` on the parsed
  document: schema validation, deal packing (or unpacking), protobuf writing, magic byte;
- ours, ``*_decode``: :func:`engine.codec.decode_condensed` / ``decode_expanded`` on the bytes:
  protobuf reading, deal unpacking, schema validation of the decoded document;
- ours, ``raw_*``: the same without validation (diagnostic; no reference counterpart);
- reference (``--reference PATH``): its public ``convertEgnFileToBinData(doc, condensed)`` and
  ``convertBinDataToEgnFile(bytes, condensed)``, which include its annotation-key check and
  ajv schema validation on the same sides (no ``JSON.parse``/``JSON.stringify``), driven by
  ``reference_codecs.js`` beside this module under the system ``node``.

Both sides run over the same games: those both write in both forms and read back, whose
bytes are identical on both sides (a difference is counted and the game left out).  Both
sides drop each result as soon as it is made (a pass keeps nothing alive; see
:func:`_each`).  After warm-up passes, the two sides take turns pass by pass and case by
case (interleaved rounds, the side that goes first alternating), so a burst of load from
another process on a shared machine spreads over both.  Games/s are medians over the
rounds; a ratio (ours/theirs, above 1 when we are faster) is the median over the rounds of
the two passes' times taken back to back in that round.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from engine import codec
from engine.codec.condensed import decode_condensed_body, encode_condensed_body
from engine.codec.deal_bits import unpack_deal
from engine.codec.expanded import read_expanded, write_deal, write_file
from engine.errors import EgnError

from .corpus import default_corpus

__all__ = ["load_corpus", "add_arguments", "run", "Reference", "CASES", "DRIVER"]

#: The cases both sides time, in the order they are run and printed.
CASES = ("condensed_encode", "condensed_decode", "expanded_encode", "expanded_decode")
#: The Node driver that times the reference (our own code; it only calls the package's API).
DRIVER = Path(__file__).with_name("reference_codecs.js")


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


class Reference:
    """The reference package timed by the Node driver, one JSON line per request."""

    def __init__(self, package: Path, *, node: str = "node") -> None:
        exe = shutil.which(node)
        if exe is None:
            raise OSError(f"{node!r} is not on PATH (needed for --reference)")
        if not package.exists():
            raise OSError(f"reference package {package} does not exist")
        self.proc = subprocess.Popen(
            [exe, str(DRIVER), str(package)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its reply.

        Raises:
            OSError: the driver died or answered with an error.
        """
        stdin: IO[str] | None = self.proc.stdin
        stdout: IO[str] | None = self.proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps(msg) + "\n")
        stdin.flush()
        line = stdout.readline()
        if not line:
            raise OSError(f"the reference driver exited (code {self.proc.wait()})")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise OSError(f"reference driver: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return max(time.perf_counter() - start, 1e-9)


def _each(fn: Callable[[Any], object], inputs: list[Any]) -> Callable[[], object]:
    """One pass: ``fn`` on every input, each result dropped as soon as it is made.

    The Node driver does the same.  Keeping a pass's results alive instead (a list of them)
    made CPython's cyclic collector walk the growing heap again and again: measured, 24% of
    an expanded-decode pass and 15% of a condensed one went to collections that a caller
    which uses each decoded game and lets it go never pays.
    """

    def one_pass() -> None:
        for item in inputs:
            fn(item)

    return one_pass


def _our_cases(docs: list[dict[str, Any]], cond: list[bytes], expd: list[bytes]) -> dict[str, Callable[[], object]]:
    """One pass over the corpus per case (validation included except in ``raw_*``)."""

    def encode(fn: Callable[[dict[str, Any]], bytes]) -> Callable[[], object]:
        return _each(fn, docs)

    def decode(fn: Callable[[bytes], Any], blobs: list[bytes]) -> Callable[[], object]:
        return _each(fn, blobs)

    def raw_expanded(doc: dict[str, Any]) -> bytes:
        return write_file(doc, lambda i, d: write_deal(unpack_deal(d, i) if isinstance(d, str) else d))

    return {
        "condensed_encode": encode(codec.encode_condensed),
        "condensed_decode": decode(codec.decode_condensed, cond),
        "expanded_encode": encode(codec.encode_expanded),
        "expanded_decode": decode(codec.decode_expanded, expd),
        "raw_condensed_encode": encode(encode_condensed_body),
        "raw_condensed_decode": decode(lambda b: decode_condensed_body(b[1:], 1)[0], cond),
        "raw_expanded_encode": encode(raw_expanded),
        "raw_expanded_decode": decode(lambda b: read_expanded(b[1:], 1)[0], expd),
    }


def _common_games(
    ref: Reference, docs: list[dict[str, Any]], cond: list[bytes], expd: list[bytes]
) -> tuple[list[int], int, int]:
    """Indices of the games the reference also handles with the same bytes; counts of the others."""
    reply = ref.ask({"cmd": "load", "docs": docs})
    keep: list[int] = []
    refused = differ = 0
    for i, (c, e) in enumerate(zip(reply["condensed"], reply["expanded"])):
        if c is None or e is None:
            refused += 1
        elif base64.b64decode(c) != cond[i] or base64.b64decode(e) != expd[i]:
            differ += 1
        else:
            keep.append(i)
    ref.ask({"cmd": "keep", "indices": keep})
    return keep, refused, differ


HELP = "encode/decode games/s of the condensed and expanded forms (and the reference's with --reference)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpus", type=Path, default=None, help="folder of .egn files (default: shared fixtures)")
    p.add_argument("--runs", type=int, default=5, help="timed rounds; the median is printed")
    p.add_argument("--warmup", type=int, default=3, help="untimed passes per case and side first")
    p.add_argument(
        "--reference",
        type=Path,
        default=None,
        metavar="PATH",
        help="a built euchre-game-notation package folder (after `npm install && npm run build`, "
        "the folder holding its package.json); times its convertEgnFileToBinData/"
        "convertBinDataToEgnFile (annotation-key check and ajv validation included) with `node` "
        "beside our encode_*/decode_* (schema validation included), both on parsed documents "
        "and bytes, each result dropped, in interleaved rounds; prints per case both games/s and "
        "the ratio ours/theirs (median of the rounds' paired ratios)",
    )
    p.add_argument("--node", default="node", help="the Node.js executable for --reference")


def run(args: argparse.Namespace) -> dict[str, Any]:
    folder = args.corpus or default_corpus()
    docs = load_corpus(folder)
    if not docs:
        raise OSError(f"no encodable .egn files under {folder}")
    runs, warmup = max(1, args.runs), max(0, args.warmup)
    cond = [codec.encode_condensed(d) for d in docs]
    expd = [codec.encode_expanded(d) for d in docs]
    ref = Reference(args.reference, node=args.node) if args.reference is not None else None
    figures: dict[str, Any] = {"corpus": str(folder)}
    try:
        if ref is not None:
            keep, refused, differ = _common_games(ref, docs, cond, expd)
            figures["reference"] = str(args.reference)
            figures["reference_refused"] = refused
            figures["bytes_differ"] = differ
            docs, cond, expd = [docs[i] for i in keep], [cond[i] for i in keep], [expd[i] for i in keep]
            if not docs:
                raise OSError("no game that both sides encode and decode")
        figures.update(games=len(docs), runs=runs, condensed_bytes=sum(map(len, cond)), expanded_bytes=sum(map(len, expd)))
        ours = _our_cases(docs, cond, expd)
        names = list(ours) if ref is None else list(CASES)
        seconds: dict[str, list[float]] = {f"{n}_ours": [] for n in names}
        seconds.update({f"{n}_ref": [] for n in CASES} if ref is not None else {})
        for round_ in range(-warmup, runs):
            for name in names:
                sides: list[tuple[str, Callable[[], float]]] = [("ours", lambda: _timed(ours[name]))]
                if ref is not None:
                    sides.append(("ref", lambda: float(ref.ask({"cmd": "time", "case": name})["seconds"])))
                    if round_ % 2:
                        sides.reverse()
                for side, timed in sides:
                    elapsed = timed()
                    if round_ >= 0:
                        seconds[f"{name}_{side}"].append(elapsed)
    finally:
        if ref is not None:
            ref.close()
    games = len(docs)
    for name in names:
        ours_rate = games / statistics.median(seconds[f"{name}_ours"])
        size = figures["condensed_bytes" if "condensed" in name else "expanded_bytes"]
        figures[f"{name}_games_per_s"] = round(ours_rate, 1)
        figures[f"{name}_mb_per_s"] = round(ours_rate * size / games / 1e6, 3)
        if ref is not None:
            ref_rate = games / statistics.median(seconds[f"{name}_ref"])
            figures[f"{name}_ref_games_per_s"] = round(ref_rate, 1)
            # Each round's two passes ran back to back, so their ratio shares that moment's
            # load; the median of those is steadier than a ratio of two separate medians.
            paired = map(lambda theirs, ours: theirs / ours, seconds[f"{name}_ref"], seconds[f"{name}_ours"])
            figures[f"{name}_ratio"] = round(statistics.median(paired), 3)
    figures["timed"] = (
        "per game: ours encode_*/decode_* on the parsed document/bytes, schema validation included "
        "(raw_*: without), each result dropped at once" + ("; reference convertEgnFileToBinData/"
        "convertBinDataToEgnFile, annotation-key check and ajv validation included, each result "
        "dropped at once; no JSON parse/stringify on either side; ratio = median over rounds of "
        "(their pass time / our pass time)" if ref is not None else "")
    )
    return figures
