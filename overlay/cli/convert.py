"""``convert``, ``baseline`` and ``upgrade``: the reference's egn-convert/egn-baseline/egn-upgrade.

Output files are byte-identical to the reference tools' (binary forms, and JSON printed as
``JSON.stringify(doc, null, 2)`` without a trailing newline).  Input forms are detected from
the content (magic byte or JSON text), so any ``.egn``/``.egnb``/``.emn`` file is accepted
whatever its extension.  The benchmarks ``bench codecs`` and ``bench fuzz`` live in
:mod:`overlay.bench`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import Any

from engine import codec
from engine.errors import CodecError, Place, SizeLimitError
from engine.upgrade import upgrade_document

__all__ = ["register", "STDIO", "source_name", "read_input", "write_output", "decode_any"]

EMN_FILE_TYPE = "Euchre Match Notation"


def register(sub: Any) -> None:
    p = sub.add_parser("convert", help="convert between .egn JSON and .egnb binaries (like egn-convert)")
    p.add_argument("input", help=".egn/.emn JSON or a binary (.egnb, .expanded.egnb, EMN binary); - reads standard input")
    _output_arguments(p, "output path (- : standard output); binary input gives JSON unless OUT ends in .egnb/.emnb")
    p.add_argument("--expanded", action="store_true", help="write the expanded binary instead of condensed")
    p.set_defaults(func=run_convert)

    p = sub.add_parser("baseline", help="baseline EGN (analysis stripped) or its SHA-256 (like egn-baseline)")
    p.add_argument("input", help="a game in any form; - reads standard input")
    _output_arguments(p, "write the baseline here (.egnb = condensed binary; default: print it)")
    p.add_argument("--hash", action="store_true", help="print the baseline SHA-256 instead")
    p.add_argument("--expanded", action="store_true", help="read binary input as expanded / write expanded")
    p.set_defaults(func=run_baseline)

    p = sub.add_parser("upgrade", help="upgrade an old EGN file to schema 1.4 (like egn-upgrade)")
    p.add_argument("input", help="an .egn JSON file; - reads standard input")
    _output_arguments(p, "output path (default: rewrite the input; standard output for -)")
    p.set_defaults(func=run_upgrade)


def _output_arguments(p: argparse.ArgumentParser, help_text: str) -> None:
    """The output as the reference tools take it (a second path) or as the other commands
    do (``-o OUT``): either, not both."""
    p.add_argument("output", nargs="?", help=help_text)
    p.add_argument("-o", "--output", dest="output_option", metavar="OUT", default=None, help="the same as the OUTPUT path")


def _output_of(args: argparse.Namespace, *, required: bool) -> str | None:
    """The output path given (``OUTPUT`` or ``-o``).

    Raises:
        OSError: both given, or none where one is needed.
    """
    if args.output is not None and args.output_option is not None:
        raise OSError(f"two outputs: {args.output} and -o {args.output_option}; give one")
    out: str | None = args.output if args.output is not None else args.output_option
    if out is None and required:
        raise OSError(f"{args.command}: where to write: OUTPUT or -o OUT")
    return out


#: the path that means standard input (as an input) or standard output (as an output)
STDIO = "-"


def source_name(path: str) -> str:
    """How errors name an input: its path, or ``stdin`` for :data:`STDIO`."""
    return "stdin" if path == STDIO else path


def read_input(path: str, *, limit: int = codec.emn.MAX_EMN_INPUT) -> bytes:
    """Read a file (standard input for ``-``: ``cat game.egn | euchre-overlay inspect -``),
    refusing it before reading it all when it is over ``limit`` bytes.

    Raises:
        SizeLimitError: too large.
        OSError: unreadable.
    """
    if path == STDIO:
        data = sys.stdin.buffer.read(limit + 1)
    else:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    if len(data) > limit:
        raise SizeLimitError(f"file is over the {limit}-byte limit", Place(source=source_name(path)))
    return data


def write_output(path: str, data: bytes | str) -> None:
    """Write atomically (a half-written file is never left behind), with the permissions a
    plain write gives (a file replaced keeps its own; the temporary file's are 0600); a
    missing folder is made, as ``render`` and ``frame`` make theirs.

    Raises:
        OSError: the file cannot be written; its ``filename`` is ``path``, not the temporary file.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if path == STDIO:  # standard output: a pipe to the next tool
        sys.stdout.buffer.write(raw if isinstance(data, bytes) or raw.endswith(b"\n") else raw + b"\n")
        sys.stdout.buffer.flush()
        return
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path))
    except OSError as exc:  # named by the output's path (the command says what is in the way)
        raise OSError(exc.errno, exc.strerror, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk, a folder in the file's place
            raise OSError(exc.errno, exc.strerror, path) from None
        raise


def decode_any(data: bytes, *, source: str, expanded: bool = False) -> dict[str, Any]:
    """A game or match from any form: JSON text, condensed, expanded or EMN binary.

    Raises:
        EgnError: unreadable or invalid input.
    """
    if not codec.is_binary(data):
        obj = codec.parse_json_text(data, source=source)
        if not isinstance(obj, dict):
            raise CodecError("the JSON text is not an object", Place(source=source))
        return obj
    if expanded:
        return codec.decode_expanded(data, source=source)
    if data[0] == codec.MAGIC_EMN:
        return codec.decode_emn(data, source=source)
    return codec.decode_bytes(data, source=source)


def _is_match(doc: dict[str, Any]) -> bool:
    return doc.get("fileType") == EMN_FILE_TYPE


def run_convert(args: argparse.Namespace) -> int:
    data = read_input(args.input)
    source = source_name(args.input)
    binary_in = codec.is_binary(data)
    doc = decode_any(data, source=source)
    out = _output_of(args, required=True)
    assert out is not None
    if binary_in and not out.endswith((".egnb", ".emnb")):
        write_output(out, codec.stringify(doc, 2))
        return 0
    if _is_match(doc):
        write_output(out, codec.encode_emn(doc, source=source))
    elif args.expanded:
        write_output(out, codec.encode_expanded(doc, source=source))
    else:
        write_output(out, codec.encode_condensed(doc, source=source))
    return 0


def run_baseline(args: argparse.Namespace) -> int:
    data = read_input(args.input, limit=codec.MAX_BINARY)
    source = source_name(args.input)
    doc = decode_any(data, source=source, expanded=args.expanded and codec.is_binary(data))
    if _is_match(doc):
        raise CodecError("a match file has no baseline; convert its games one by one", Place(source=source))
    out = _output_of(args, required=False)
    if args.hash:
        print(codec.baseline_hash(doc, source=source))
        return 0
    base = codec.baseline(doc, source=source)
    if out and out.endswith(".egnb"):
        encode = codec.encode_expanded if args.expanded else codec.encode_condensed
        write_output(out, encode(base, source=source))
    elif out:
        write_output(out, codec.stringify(base, 2))
    else:
        sys.stdout.write(codec.stringify(base, 2) + "\n")
    return 0


def run_upgrade(args: argparse.Namespace) -> int:
    data = read_input(args.input)
    obj = codec.parse_json_text(data, source=source_name(args.input))
    write_output(_output_of(args, required=False) or args.input, codec.stringify(upgrade_document(obj), 2))
    return 0

