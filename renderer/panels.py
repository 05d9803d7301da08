"""Panel elements: scores, trick boxes, trump trackers, title, kitty, suit and trick trackers,
annotations (with quality badges) and the deal/game banner."""

from __future__ import annotations

import math

import re

from engine.cards import Card, Rank, Suit, resolve
from engine.state import GameState, StepKind, UpCardState

from .cardart import MIN_CARD_SCALE, suit_colour, suit_path
from .contrast import ink_on
from .callout import callout_text, gather_times, trick_winner
from .context import Ctx, is_preshow
from .fonts import MIN_TEXT, measure
from .scene import Num
from .table import SUIT_WORD, card
from .view import Element, ElementType, Extra

__all__ = ["SIZES", "draw_panel", "extra_panel", "parse_quality", "ink_on", "up_card_in_centre", "deal_label", "title_size", "TITLE_GROWTH", "opaque", "PANEL_OPACITY"]


def deal_label(state: GameState) -> int:
    """The deal number people see (screen, seek, ``inspect`` text): 1 for the first deal of
    the file, counted by position (``GameState.deal + 1``), whatever the file's ``dealNumber``
    says (the JSON contract keeps that one)."""
    return state.deal + 1


# Every label is at least 20 px at 1080p (13 px at 720p): the panels are sized for that.
SIZES: dict[str, tuple[float, float]] = {
    "ns-score": (300, 84),
    "ew-score": (300, 84),
    "ns-trick-boxes": (144, 84),
    "ew-trick-boxes": (144, 84),
    "ns-trump-tracker": (230, 84),
    "ew-trump-tracker": (230, 84),
    "trump-tracker": (360, 84),
    "title": (360, 84),
    "kitty-tracker": (240, 210),
    "suit-tracker": (360, 188),
    "trick-tracker": (360, 196),
    "annotations": (600, 150),
    "banner": (800, 200),
    "trick-callout": (460, 64),
}

_QUALITY = re.compile(r"^\[(!!|\?\?|!\?|\?!|!|\?)\]\s*")
_QUALITY_WORD = {"!!": "BRILLIANT", "!": "GOOD", "!?": "INTERESTING", "?!": "DUBIOUS", "?": "MISTAKE", "??": "BLUNDER"}


def parse_quality(text: str) -> tuple[str | None, str]:
    """Split an EGN annotation into its quality tag (``"!!"`` ... ``"??"``) and the comment."""
    m = _QUALITY.match(text)
    if m is None:
        return None, text
    return m.group(1), text[m.end() :]


def draw_panel(ctx: Ctx, el: Element) -> None:
    t = el.type.value
    if t in ("ns-score", "ew-score"):
        _score(ctx, el, 0 if t.startswith("ns") else 1)
    elif t in ("ns-trick-boxes", "ew-trick-boxes"):
        _trick_boxes(ctx, el, 0 if t.startswith("ns") else 1)
    elif t in ("ns-trump-tracker", "ew-trump-tracker"):
        _trump(ctx, el, 0 if t.startswith("ns") else 1)
    elif t == "trump-tracker":
        _trump(ctx, el, None)
    elif t == "title":
        _title(ctx, el)
    elif t == "kitty-tracker":
        _kitty(ctx, el)
    elif t == "suit-tracker":
        _suits(ctx, el)
    elif t == "trick-tracker":
        _tricks(ctx, el)
    elif t == "annotations":
        _annotations(ctx, el)
    elif t == "banner":
        _banner(ctx, el)
    elif t == "trick-callout":
        _trick_callout(ctx, el)


def extra_panel(ctx: Ctx, ex: Extra, w: float, h: float) -> None:
    """The backdrop of a ``w`` x ``h`` extra (statistics, analysis, ...): the theme's panel
    with its shadow, the extra's own background and corner radius where its style sets them."""
    th, b = ctx.theme, ctx.b
    r = ex.style.radius if ex.style.radius is not None else 10.0
    b.save()
    s = ex.scale * ctx.out_scale
    b.shadow(th.shadow, 14 * s, 0, 4 * s)
    b.rrect(0, 0, w, h, r, opaque(ex.style.background or th.panel), th.panel_edge, 1.0)
    b.restore()


#: the least opacity of an extra's panel: text on it reads over anything behind it (a name
#: plate, a bright video)
PANEL_OPACITY = 0.96


def opaque(colour: str, floor: float = PANEL_OPACITY) -> str:
    """``colour`` (``#rrggbb`` or ``#rrggbbaa``) with at least ``floor`` opacity."""
    if len(colour) != 9:
        return colour
    least = round(floor * 255)
    return colour if int(colour[7:], 16) >= least else f"{colour[:7]}{least:02x}"


def _count(ctx: Ctx, font: str, size: float, right: float, baseline: float, old: int, new: int, colour: str) -> None:
    """A number that counts from ``old`` to ``new`` over the run time (right-aligned)."""
    b = ctx.b
    if old == new or ctx.run <= 0:
        ctx.label(font, size, right, baseline, str(new), colour, align="right")
        return
    n = abs(new - old)
    step = 1 if new > old else -1
    times = [ctx.run * 0.3 + ctx.run * 0.7 * k / n for k in range(n + 1)]
    for k in range(n + 1):
        v = old + step * k
        keys: list[tuple[float, float] | tuple[float, float, str]] = []
        if k > 0:
            keys += [(times[k] - 1e-3, 0.0), (times[k], 1.0, "step")]
        else:
            keys += [(0.0, 1.0)]
        if k < n:
            keys += [(times[k + 1] - 1e-3, 1.0), (times[k + 1], 0.0, "step")]
        b.save()
        b.alpha(b.track(keys))
        ctx.label(font, size, right, baseline, str(v), colour, align="right")
        b.restore()


def _score(ctx: Ctx, el: Element, team: int) -> None:
    st = ctx.state
    new = st.score[team]
    old = new - (st.deal_points[team] if st.deal_points and st.kind is StepKind.DEAL_SCORED else 0)
    # kept by what it shows (a count from old to new is animated, and so drawn every time)
    ctx.still(("score", team, ctx.teams, st.players, st.num_players, old, new), el, lambda: _score_drawn(ctx, el, team, old, new))


def _score_drawn(ctx: Ctx, el: Element, team: int, old: int, new: int) -> None:
    th = ctx.theme
    w, h = SIZES["ns-score"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.b.rrect(0, 0, 10, h, 5, ctx.team_colour(team), None, 0)
    side = "NORTH \u00b7 SOUTH" if team == 0 else "EAST \u00b7 WEST"
    size = el.style.font_size or 27
    name = ctx.team_label(team, th.font_heading, size, w - 100, ls=0.5)
    alone = name == side  # names too long to fit: the side alone, said once, in the middle
    if not alone:
        ctx.label(th.font_body, 20, 24, 30, side, th.muted, ls=2.0)
    ctx.label(th.font_heading, size, 24, 52 if alone else 66, name, ctx.text_colour(el), width=w - 100, ls=0.5)
    _count(ctx, th.font_title, 58, w - 16, 66, old, new, ctx.text_colour(el))


def _trick_boxes(ctx: Ctx, el: Element, team: int) -> None:
    st = ctx.state
    won = st.tricks_per_team[team] if st.tricks_per_team else 0
    if st.kind in (StepKind.DEAL_START,):
        won = 0
    fresh = (
        st.kind is StepKind.TRICK_TAKEN and st.trick is not None and st.trick.winner is not None and st.trick.winner % 2 == team
    )
    # kept by what it shows (a fresh trick's box pops in, and so is drawn every time)
    ctx.still(("tricks", team, won, fresh), el, lambda: _trick_boxes_drawn(ctx, el, team, won, fresh))


def _trick_boxes_drawn(ctx: Ctx, el: Element, team: int, won: int, fresh: bool) -> None:
    th, b = ctx.theme, ctx.b
    w, h = SIZES["ns-trick-boxes"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.label(th.font_body, 20, w / 2, 30, "TRICKS", th.muted, align="center", ls=2.0)
    n_boxes = 5
    bw, gap, top, bh = 20.0, 6.0, 42.0, 30.0
    x0 = (w - (n_boxes * bw + (n_boxes - 1) * gap)) / 2
    for i in range(n_boxes):
        x = x0 + i * (bw + gap)
        b.rrect(x, top, bw, bh, 4, "#ffffff14", "#ffffff33", 1.0)
        if i < won:
            if fresh and i == won - 1:
                sc, al = ctx.pop(ctx.run * 0.6, max(0.05, ctx.run * 0.4), start=0.3)
                b.save()
                b.alpha(al)
                b.translate(x + bw / 2, top + bh / 2)
                b.scale(sc)
                b.rrect(-bw / 2, -bh / 2, bw, bh, 4, ctx.team_colour(team), None, 0)
                b.restore()
            else:
                b.rrect(x, top, bw, bh, 4, ctx.team_colour(team), None, 0)


def _suit_badge(ctx: Ctx, cx: float, cy: float, r: float, code: str) -> None:
    b, th = ctx.b, ctx.theme
    b.rrect(cx - r, cy - r, 2 * r, 2 * r, r, "#ffffffff", None, 0)
    if code in "shdc":
        s = Suit(code)
        b.path(suit_path(s, cx - r * 0.62, cy - r * 0.6, r * 1.24), suit_colour(s, th.cards), None, 0)
    else:
        ctx.label(th.font_title, r * 1.1, cx, cy + r * 0.4, "NT", "#16181dff", align="center")


def _trump(ctx: Ctx, el: Element, team: int | None) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    code = st.trump_code
    if code is None or st.maker is None or st.kind is StepKind.DEAL_START:
        return
    if team is not None and st.maker % 2 != team:
        return
    maker = st.maker
    fresh = st.kind is StepKind.CALL and st.action is not None and st.action.call not in (None, "Pass")
    # kept by what it shows (a fresh call pops it in, and so is drawn every time)
    ctx.still(("trump", team, code, maker, st.alone, st.players, fresh), el, lambda: _trump_drawn(ctx, el, team, code, maker, fresh))


def _trump_drawn(ctx: Ctx, el: Element, team: int | None, code: str, maker: int, fresh: bool) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    w, h = SIZES["trump-tracker" if team is None else "ns-trump-tracker"]
    b.save()
    if fresh:
        sc, al = ctx.pop(ctx.run * 0.5, max(0.05, ctx.run), start=0.8)
        b.alpha(al)
        b.translate(0, h / 2)
        b.scale(sc)
        b.translate(0, -h / 2)
    ctx.panel(0, 0, w, h, el=el)
    _suit_badge(ctx, h / 2, h / 2, h / 2 - 10, code)
    x = h + 4
    ctx.label(th.font_body, 20, x, 32, "TRUMP", th.muted, ls=1.0)
    right = w - 14
    top_right = right  # the top row's right edge, left of the ALONE pill
    if st.alone:
        pw = measure(th.font_heading, 20, "ALONE", 1.0) + 18
        b.rrect(right - pw, 10, pw, 30, 15, th.accent, None, 0)
        ctx.label(th.font_heading, 20, right - pw / 2, 32, "ALONE", ink_on(th.accent), align="center", ls=1.0)
        top_right -= pw + 8
    word_w = (right - x) if team is not None else (w - x - 150)
    ctx.label(th.font_heading, 26, x, 66, SUIT_WORD.get(code, code), ctx.text_colour(el), ls=0.5, width=word_w)
    if team is None:
        ctx.label(th.font_body, 20, top_right, 32, "CALLED BY", th.muted, align="right", ls=2.0)
        ctx.label(th.font_heading, 24, right, 66, ctx.player_label(maker, th.font_heading, 24, 140), ctx.text_colour(el), align="right", width=140)
    b.restore()


#: how much taller the title panel is with the event's subtitle on a line of its own
TITLE_GROWTH = 28.0


def title_size(ctx: Ctx) -> tuple[float, float]:
    """The title panel's box: taller when it carries the event's subtitle."""
    w, h = SIZES["title"]
    return w, h + (TITLE_GROWTH if ctx.subtitle else 0.0)


def _title(ctx: Ctx, el: Element) -> None:
    """The title (the event's, else the file's), the event's subtitle on a line of its own
    (the panel grows for it), and where the game stands (which game of a match, deal, round)."""
    st, th = ctx.state, ctx.theme
    w, h = title_size(ctx)
    ctx.panel(0, 0, w, h, el=el)
    ctx.b.rrect(w - 8, 0, 8, h, 4, th.accent, None, 0)
    title = (ctx.title or "Euchre").upper()
    ctx.label(th.font_heading, el.style.font_size or 28, w - 22, 38, title, ctx.text_colour(el), align="right", width=w - 40, ls=1.0)
    y = 68.0
    if ctx.subtitle:
        ctx.label(th.font_body, 21, w - 22, 66, ctx.subtitle.upper(), ctx.text_colour(el), align="right", ls=1.0, width=w - 40)
        y += TITLE_GROWTH
    if is_preshow(st):
        sub = "STARTING SOON"
    else:
        sub = f"DEAL {deal_label(st)}"
        if st.calls and st.calls[-1].round == 2 and st.trump_code is None:
            sub += " \u00b7 ROUND 2"
    if ctx.game is not None:
        sub = f"{ctx.game.label.upper()} \u00b7 {sub}"
    ctx.label(th.font_body, 20, w - 22, y, sub, th.muted, align="right", ls=2.0, width=w - 40)


def up_card_in_centre(ctx: Ctx) -> bool:
    """Whether the play area shows the up-card now (bidding, before a card is played).

    The kitty panel then leaves it out, so the one public card is never drawn twice.
    """
    st = ctx.state
    return (
        ElementType.PLAY_AREA in ctx.placed
        and st.up_card is not None
        and st.up_card_state is not UpCardState.TAKEN
        and not st.tricks
        and (st.trick is None or not st.trick.cards)
    )


def _kitty(ctx: Ctx, el: Element) -> None:
    """The kitty: the up-card face up with what became of it (every viewer saw it turned), and
    the dealer's discard (hidden information: face up only where the view shows the dealer's
    hand)."""
    st, th = ctx.state, ctx.theme
    w, h = SIZES["kitty-tracker"]
    if st.up_card is None or up_card_in_centre(ctx):
        return
    ctx.panel(0, 0, w, h, el=el)
    ctx.label(th.font_body, 20, w / 2, 30, "KITTY", th.muted, align="center", ls=3.0)
    # cards big enough for their print (a bower's tab, the joker's letters) to read at 720p
    s = MIN_CARD_SCALE
    up = st.up_card_state
    two = st.discard is not None
    cx1, cx2, cy, col = (w / 4 if two else w / 2), w * 3 / 4, 109.0, w / 2 - 4 if two else w - 20
    act = st.action
    ordering = st.kind is StepKind.CALL and act is not None and act.call == "Order"
    # while the ordered card flies to the dealer, its kitty copy comes in only as it lands
    arrive: Num = ctx.b.tween(ctx.run * 0.85, ctx.run, 0.0, 1.0, "linear") if ordering else 1.0
    card(ctx, ctx.sprite_id(st.up_card), cx1, cy, s=s, alpha=arrive)
    cap = {UpCardState.FACE_UP: "UP CARD", UpCardState.TURNED_DOWN: "TURNED DOWN", UpCardState.TAKEN: "PICKED UP"}[up]
    ctx.label(th.font_body, 20, cx1, 196, cap, th.muted, align="center", ls=1.0, width=col)
    if st.discard is not None and st.kind is not StepKind.DISCARD:
        card(ctx, ctx.sprite_id(st.discard, face=ctx.face_up(st.dealer)), cx2, cy, s=s)
        ctx.label(th.font_body, 20, cx2, 196, "DISCARD", th.muted, align="center", ls=1.0, width=col)
    elif st.kind is StepKind.DISCARD and st.discard is not None:
        a = ctx.b.tween(ctx.run * 0.8, ctx.run, 0.0, 1.0, "linear")
        card(ctx, ctx.sprite_id(st.discard, face=ctx.face_up(st.dealer)), cx2, cy, s=s, alpha=a)


def _played(ctx: Ctx) -> list[Card]:
    st = ctx.state
    cards = [c for t in st.tricks for c in t.cards]
    if st.trick is not None and st.trick not in st.tricks:
        cards += list(st.trick.cards)
    return [resolve(c, st.trump) for c in cards]


def _suits(ctx: Ctx, el: Element) -> None:
    st = ctx.state
    played = _played(ctx)
    out = frozenset((c.suit, c.rank) for c in played)
    # the whole deck the rules deal (7s and 8s, the joker) from the first card, not from the
    # first one played; a game read with other rules than it was played shows what it holds
    lowest = min([int(c.rank) for c in played if c.rank is not None] + [st.lowest_rank])
    joker_out = any(c.joker for c in played)
    joker = st.joker or joker_out
    # still, and redrawn at every card of a live game: kept by what it shows
    ctx.still(("suit-tracker", st.trump, lowest, out, joker, joker_out), el, lambda: _suits_drawn(ctx, el, lowest, out, joker, joker_out))


def _suits_drawn(ctx: Ctx, el: Element, lowest: int, out: frozenset[tuple[Suit | None, Rank | None]], joker: bool, joker_out: bool) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    w, h = SIZES["suit-tracker"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.label(th.font_body, 20, 16, 30, "CARDS PLAYED", th.muted, ls=2.0)
    if joker:  # the joker, the highest trump, at the heading's end: struck out once played
        tw = ctx.label(th.font_heading, 22, w - 16, 30, "JOKER", ctx.text_colour(el) if not joker_out else th.muted, align="right", ls=1.0)
        if joker_out:  # struck as the ranks are: beside the word, no line across it
            for x0, x1 in ((w - 16 - tw - 14, w - 16 - tw - 3), (w - 13, w - 5)):
                b.rrect(x0, 21, x1 - x0, 2.5, 1.25, th.accent, None, 0)
    ranks = [r for r in Rank if int(r) >= lowest]
    col = (w - 64) / len(ranks)
    for row, suit in enumerate((Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)):
        y = 44 + row * 35
        if st.trump is suit:
            b.rrect(8, y, w - 16, 32, 6, th.accent + "26", th.accent + "80", 1.0)
        b.path(suit_path(suit, 18, y + 5, 22), "#ffffffff" if suit.colour == "black" else "#ff5a6eff", None, 0)
        for i, r in enumerate(ranks):
            gone = (suit, r) in out
            label = "10" if r == Rank.TEN else r.letter
            # a played card is struck out, in the muted colour: readable (>= 4.5:1), not faint;
            # the strike stops short of the rank on both sides, so no line crosses the glyphs
            colour = ctx.text_colour(el) if not gone else th.muted
            cx = 60 + col * i + col / 2
            tw = ctx.label(th.font_heading, 22, cx, y + 24, label, colour, align="center")
            if gone:
                left, right = 60 + col * i + 4, 60 + col * (i + 1) - 4
                for x0, x1 in ((left, cx - tw / 2 - 3), (cx + tw / 2 + 3, right)):
                    if x1 - x0 >= 2:
                        b.rrect(x0, y + 15, x1 - x0, 2.5, 1.25, th.accent, None, 0)


def _tricks(ctx: Ctx, el: Element) -> None:
    st, th = ctx.state, ctx.theme
    w, h = SIZES["trick-tracker"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.label(th.font_body, 20, 16, 30, "TRICKS", th.muted, ls=2.0)
    for i, t in enumerate(st.tricks[:5]):
        y = 60 + i * 28
        ctx.label(th.font_heading, 20, 16, y, str(i + 1), th.muted)
        x = 40.0
        for c in t.cards:
            c = resolve(c, st.trump)
            txt = ("10" if c.rank == Rank.TEN else c.rank.letter) if c.rank is not None else "?"
            colour = suit_colour(c.suit, th.cards) if c.suit is not None else th.text
            colour = "#ff6b7dff" if c.suit is not None and c.suit.colour == "red" else "#ffffffff"
            ctx.label(th.font_heading, 20, x, y, txt, colour)
            if c.suit is not None:
                ctx.b.path(suit_path(c.suit, x + 17, y - 14, 14), colour, None, 0)
            x += 44
        if t.winner is not None:
            ctx.b.rrect(w - 128, y - 17, 6, 20, 3, ctx.team_colour(t.winner % 2), None, 0)
            ctx.label(th.font_heading, 20, w - 116, y, ctx.player_label(t.winner, th.font_heading, 20, 104), ctx.text_colour(el), width=104)


def _wrap(font: str, size: float, text: str, width: float, first_indent: float) -> list[str]:
    lines: list[str] = []
    cur = ""
    for word in text.split():
        trial = f"{cur} {word}".strip()
        limit = width - (first_indent if not lines else 0)
        if cur and measure(font, size, trial) > limit:
            lines.append(cur)
            cur = word
        else:
            cur = trial
    if cur:
        lines.append(cur)
    return lines


def _annotations(ctx: Ctx, el: Element) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    notes = [n for n in st.annotations if n.strip()]
    if not notes:
        return
    w, h = SIZES["annotations"]
    pad = el.style.padding if el.style.padding is not None else 18
    size = el.style.font_size or 25
    slide: Num = b.tween(0.0, max(0.05, ctx.run), -40.0, 0.0, "out")
    al: Num = b.tween(0.0, max(0.05, ctx.run * 0.6), 0.0, 1.0, "out")
    b.save()
    b.alpha(al)
    b.translate(slide, 0)
    ctx.panel(0, 0, w, h, el=el)
    b.rrect(0, 0, 8, h, 4, th.accent, None, 0)
    ctx.label(th.font_body, 20, pad + 8, pad + 16, "ANALYSIS", th.muted, ls=3.0)
    y = pad + 16 + size + 8
    max_lines = int((h - y + size * 0.3) // (size * 1.2))
    for note in notes:
        tag, body = parse_quality(note)
        indent = 0.0
        x = pad + 8
        if tag is not None:
            colour = th.quality_colours.get(tag, th.accent)
            word = f"{tag}  {_QUALITY_WORD[tag]}"
            tag_size = max(20.0, size * 0.8)
            bw = measure(th.font_heading, tag_size, word, 1.0) + 18
            b.rrect(x, y - size * 0.86, bw, size * 1.1, 5, colour, None, 0)
            ctx.label(th.font_heading, tag_size, x + 9, y - size * 0.06, word, ink_on(colour), ls=1.0)
            indent = bw + 10
        lines = _wrap(th.font_body, size, body, w - 2 * pad - 8, indent)
        for i, line in enumerate(lines):
            if max_lines <= 0:
                break
            last = max_lines == 1 and i < len(lines) - 1
            text = line + ("\u2026" if last else "")
            ctx.label(th.font_body, size, x + (indent if i == 0 else 0), y, text, ctx.text_colour(el), width=w - 2 * pad - 8 - (indent if i == 0 else 0))
            y += size * 1.2
            max_lines -= 1
    b.restore()


def _banner(ctx: Ctx, el: Element) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    w, h = SIZES["banner"]
    if st.kind is StepKind.GAME_OVER and st.winner is not None:
        head = ctx.team_label(st.winner, th.font_title, 72, w - 60, ls=1.5, suffix=" WIN")
        kicker, colour = "GAME OVER", ctx.team_colour(st.winner)
        line = f"{st.score[st.winner]} \u2013 {st.score[1 - st.winner]}"
        won = ctx.game.after(st.winner) if ctx.game is not None else None
        if won is not None:  # a match: the games each side has won now, the winner's first
            line += f" \u00b7 MATCH {won[st.winner]}\u2013{won[1 - st.winner]}"
    elif st.kind is StepKind.DEAL_SCORED and st.deal_points is not None:
        if st.thrown_in or sum(st.deal_points) == 0:
            kicker, head, colour, line = "NO SCORE", "THROWN IN", th.muted, "ALL PASSED"
        else:
            team = 0 if st.deal_points[0] > 0 else 1
            pts = st.deal_points[team]
            maker_team = st.maker_team
            tricks = st.tricks_per_team[maker_team] if maker_team is not None else 0
            if maker_team is not None and team != maker_team:
                head = "EUCHRED!"
            elif tricks == 5:
                head = "LONER MARCH!" if st.alone else "MARCH!"
            else:
                head = "MADE IT"
            kicker = ctx.team_label(team, th.font_heading, 24, w - 60, ls=4.0)
            colour = ctx.team_colour(team)
            line = f"+{pts} POINT{'S' if pts != 1 else ''}"
    else:
        return
    total = ctx.st.total
    sc, al = ctx.pop(0.0, max(0.05, ctx.run * 0.6), start=0.7)
    fade: Num = 1.0
    if st.kind is StepKind.DEAL_SCORED:
        fade = b.track([(0.0, 1.0), (max(0.0, total - 0.4), 1.0), (total, 0.0, "in")])
    b.save()
    b.alpha(al)
    b.alpha(fade)
    b.translate(w / 2, h / 2)
    b.scale(sc)
    b.translate(-w / 2, -h / 2)
    ctx.panel(0, 0, w, h, el=el, r=16)
    b.rrect(0, h - 10, w, 10, 5, colour, None, 0)
    # the kicker in the text colour: a team colour on the dark panel is under 4.5:1 over a
    # bright picture; the team colour stays in the bar under the panel
    ctx.label(th.font_heading, 24, w / 2, 46, kicker, th.muted if colour == th.muted else ctx.text_colour(el), align="center", ls=4.0, width=w - 60)
    ctx.label(th.font_title, 72, w / 2, 122, head, ctx.text_colour(el), align="center", ls=1.5, width=w - 60)
    ctx.label(th.font_heading, 30, w / 2, 168, line, th.accent, align="center", ls=2.0)
    b.restore()


def _trick_callout(ctx: Ctx, el: Element) -> None:
    """"RAMAN TAKES IT WITH THE A♠": from the moment the winning card is marked, through the hold;
    fades out at the end of the step so it never covers the next card."""
    st, th, b = ctx.state, ctx.theme, ctx.b
    w, h = SIZES["trick-callout"]
    size, ls, suit_w = 30.0, 1.0, 30.0
    room = w - 48 - suit_w
    text = callout_text(st, ctx.name(st.trick.winner) if st.trick and st.trick.winner is not None else "", lambda s: measure(th.font_heading, MIN_TEXT, s, ls) <= room)
    won = trick_winner(st)
    if text is None or won is None:
        return
    seat, card_won = won
    suit = None if card_won.joker else card_won.suit
    mark, _, _ = gather_times(ctx.run)
    total = ctx.st.total
    sc, al = ctx.pop(mark, max(0.05, ctx.run * 0.25), start=0.8)
    fade = b.track([(0.0, 1.0), (max(mark + 0.1, total - 0.3), 1.0), (max(mark + 0.2, total), 0.0, "in")])
    tw = measure(th.font_heading, size, text, ls)
    if tw > room:
        # shrunk in whole pixels: a fractional size under the pop's scale drew glyph edges
        # Chromium and skia place differently (an 8x8 block 24.75/255 apart mid-pop)
        size = max(MIN_TEXT, float(math.floor(size * room / tw)))
        tw = measure(th.font_heading, size, text, ls)
    full = tw + (suit_w + 6 if suit is not None else 0)
    b.save()
    b.alpha(al)
    b.alpha(fade)
    b.translate(w / 2, h / 2)
    b.scale(sc)
    b.translate(-w / 2, -h / 2)
    ctx.panel(w / 2 - full / 2 - 24, 0, full + 48, h, el=el, r=h / 2)
    b.rrect(w / 2 - full / 2 - 24, 0, full + 48, h, h / 2, None, ctx.team_colour(seat % 2), 3)
    x0 = w / 2 - full / 2
    ctx.label(th.font_heading, size, x0, h / 2 + size * 0.36, text, ctx.text_colour(el), ls=ls)
    if suit is not None:
        cx, cy, r = x0 + tw + 6 + suit_w / 2, h / 2 - 1, suit_w / 2
        b.rrect(cx - r, cy - r, 2 * r, 2 * r, r, "#ffffffff", None, 0)
        b.path(suit_path(suit, cx - r * 0.62, cy - r * 0.6, r * 1.24), suit_colour(suit, th.cards), None, 0)
    b.restore()
