"""Where the shared reference fixtures live, and helpers that read their TSV tables.

The fixtures were made with the reference implementation; they sit beside the clone in CI
(``../shared/fixtures/egn``) and are never copied into the repository.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "egn"


def shared() -> Path:
    """The fixture folder, or skip the calling test."""
    if not SHARED.is_dir():
        pytest.skip(f"../shared/fixtures not present: {SHARED}")
    return SHARED


def files(pattern: str) -> list[str]:
    """Fixture paths (relative to :data:`SHARED`) matching ``pattern``, for parametrize ids."""
    if not SHARED.is_dir():
        return []
    return sorted(str(p.relative_to(SHARED)) for p in SHARED.glob(pattern))


def tsv_rows(name: str) -> list[tuple[str, ...]]:
    """Rows of every ``name`` TSV (header dropped); the first column is made relative to SHARED."""
    if not SHARED.is_dir():
        return []
    rows = []
    for table in sorted(SHARED.rglob(name)):
        folder = table.parent.relative_to(SHARED)
        with table.open(encoding="utf-8", newline="") as fh:
            for row in list(csv.reader(fh, delimiter="\t"))[1:]:
                if row:
                    rows.append((str(folder / row[0]), *row[1:]))
    return rows
