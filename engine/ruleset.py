"""The ruleset: every EGN ruleset key with its default, plus the regional presets.

The rules read these fields; no module keeps its own ``if`` chain of house rules.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["LonerLead", "Ruleset", "PRESETS", "preset"]


class LonerLead(str, Enum):
    LEFT_OF_DEALER = "LEFT_OF_DEALER"
    LEFT_OF_LONER = "LEFT_OF_LONER"


class Ruleset(BaseModel):
    """EGN ``metadata.ruleset`` (snake_case keys, as EGN writes them), defaults filled in.

    The document model keeps which keys were actually written (``model_fields_set``), since
    the binary codecs store exactly those.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    std: bool = Field(True, title="Stick the dealer", description="Dealer must name trump if all pass in round 2.")
    min_rank: int = Field(9, title="Lowest rank", description="9: 24 cards, 8: 28 cards, 7: 32 cards.")
    winning_score: int = Field(10, ge=0, title="Winning score", description="Points that win the game.")
    num_deals: int = Field(0, ge=0, title="Number of deals", description="Fixed number of deals; 0 = play to the winning score.")
    canadian: bool = Field(False, title="Canadian loner", description="Dealer's partner who orders up must go alone.")
    loner_lead: LonerLead = Field(LonerLead.LEFT_OF_DEALER, title="Loner lead", description="Who leads trick 1 against a loner.")
    loner_march_score: int = Field(4, title="Loner march score", description="Points for a loner taking all tricks.")
    loner_euchred_score: int = Field(2, title="Loner euchred score", description="Points to defenders who euchre a loner.")
    defend_alone: bool = Field(False, title="Defend alone", description="One defender may play alone against a loner.")
    farmers: bool = Field(False, title="Farmer's hand", description="A hand of 3+ nines/tens may be exchanged.")
    partners_best: bool = Field(False, title="Partner's best", description="Loner's partner passes a best card.")
    go_under: bool = Field(False, title="Go under", description="A weak hand may swap cards with the kitty.")
    joker: bool = Field(False, title="Joker (Benny)", description="The joker is the highest trump.")
    num_players: int = Field(4, title="Players", description="Number of active players.")
    allow_no_trump: bool = Field(False, title="No-trump", description="'n' may be named in round 2.")
    fast_break: bool = Field(False, title="Fast break", description="Defenders win tricks 1-2 then lose 3: nobody scores.")
    four_trick_tokens: bool = Field(False, title="Four-trick tokens", description="Makers taking exactly 4 tricks earn a token; 4 tokens = 1 point.")

    @model_validator(mode="before")
    @classmethod
    def _schema_rules(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if "winning_score" in data and "num_deals" in data:
                raise ValueError("winning_score and num_deals may not both be present")
            if data.get("winning_score") == 0:
                raise ValueError("winning_score 0 requires num_deals, which may not be combined with it")
        return data

    @property
    def lowest_rank(self) -> int:
        """The deck's lowest rank (9 for 24 cards, down to 6)."""
        return self.min_rank if self.min_rank in (6, 7, 8, 9) else 9

    @property
    def deck_size(self) -> int:
        return (15 - self.lowest_rank) * 4 + (1 if self.joker else 0)

    @property
    def target(self) -> int | None:
        """Winning score, or ``None`` for a fixed number of deals."""
        return None if self.num_deals > 0 else self.winning_score

    def written(self) -> dict[str, Any]:
        """The keys that were present in the document, as JSON."""
        return self.model_dump(mode="json", include=set(self.model_fields_set))


def _make(**kw: Any) -> Ruleset:
    return Ruleset.model_validate(kw)


#: Regional presets: name -> the ruleset most played there (docs/engine.md, "Rules").
PRESETS: dict[str, Ruleset] = {
    "us-canada": _make(winning_score=10, min_rank=9, joker=False),
    "british": _make(winning_score=11, min_rank=9, joker=True),
    "australia": _make(winning_score=10, min_rank=9, joker=True),
    "new-zealand": _make(winning_score=10, min_rank=7),
}


def preset(name: str, *, target: int | None = None, stick_the_dealer: bool | None = None) -> Ruleset:
    """A named regional ruleset, optionally with a different target (5/7/10/11) or STD flag.

    Raises:
        KeyError: unknown preset name.
    """
    base = PRESETS[name]
    data = base.model_dump()
    if target is not None:
        data["winning_score"] = target
    if stick_the_dealer is not None:
        data["std"] = stick_the_dealer
    data.pop("num_deals")
    return Ruleset.model_validate(data)
