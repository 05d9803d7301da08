"""Panel elements: scores, trick boxes, trump trackers, title, kitty, suit and trick trackers,
annotations (with quality badges) and the deal/game banner."""

from __future__ import annotations

import re

from engine.cards import Card, Rank, Suit, resolve
from engine.state import StepKind, UpCardState

from .cardart import suit_colour, suit_path
from .context import Ctx
from .fonts import measure
from .scene import Num
from .table import SUIT_WORD, card
from .view import Element

__all__ = ["SIZES", "draw_panel", "parse_quality"]

SIZES: dict[str, tuple[float, float]] = {
    "ns-score": (300, 64),
    "ew-score": (300, 64),
    "ns-trick-boxes": (144, 64),
    "ew-trick-boxes": (144, 64),
    "ns-trump-tracker": (230, 64),
    "ew-trump-tracker": (230, 64),
    "trump-tracker": (360, 72),
    "title": (360, 72),
    "kitty-tracker": (200, 196),
    "suit-tracker": (360, 180),
    "trick-tracker": (360, 176),
    "annotations": (600, 150),
    "banner": (800, 200),
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
    st, th = ctx.state, ctx.theme
    w, h = SIZES["ns-score"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.b.rrect(0, 0, 10, h, 5, ctx.team_colour(team), None, 0)
    ctx.label(th.font_body, 15, 24, 24, "NORTH \u00b7 SOUTH" if team == 0 else "EAST \u00b7 WEST", th.muted, ls=2.0)
    ctx.label(th.font_heading, el.style.font_size or 25, 24, 51, ctx.team_short(team).upper(), ctx.text_colour(el), width=w - 100, ls=0.5)
    new = st.score[team]
    old = new - (st.deal_points[team] if st.deal_points and st.kind is StepKind.DEAL_SCORED else 0)
    _count(ctx, th.font_title, 50, w - 16, 52, old, new, ctx.text_colour(el))


def _trick_boxes(ctx: Ctx, el: Element, team: int) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    w, h = SIZES["ns-trick-boxes"]
    ctx.panel(0, 0, w, h, el=el)
    won = st.tricks_per_team[team] if st.tricks_per_team else 0
    if st.kind in (StepKind.DEAL_START,):
        won = 0
    fresh = (
        st.kind is StepKind.TRICK_TAKEN and st.trick is not None and st.trick.winner is not None and st.trick.winner % 2 == team
    )
    n_boxes = 5
    bw, gap = 20.0, 6.0
    x0 = (w - (n_boxes * bw + (n_boxes - 1) * gap)) / 2
    for i in range(n_boxes):
        x = x0 + i * (bw + gap)
        b.rrect(x, 14, bw, 36, 4, "#ffffff14", "#ffffff33", 1.0)
        if i < won:
            if fresh and i == won - 1:
                sc, al = ctx.pop(ctx.run * 0.6, max(0.05, ctx.run * 0.5), start=0.3)
                b.save()
                b.alpha(al)
                b.translate(x + bw / 2, 32)
                b.scale(sc)
                b.rrect(-bw / 2, -18, bw, 36, 4, ctx.team_colour(team), None, 0)
                b.restore()
            else:
                b.rrect(x, 14, bw, 36, 4, ctx.team_colour(team), None, 0)
    _ = th


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
    w, h = SIZES["trump-tracker" if team is None else "ns-trump-tracker"]
    fresh = st.kind is StepKind.CALL and st.action is not None and st.action.call not in (None, "Pass")
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
    ctx.label(th.font_body, 15, x, 25, "TRUMP", th.muted, ls=2.0)
    ctx.label(th.font_heading, 24, x, 51, SUIT_WORD.get(code, code), ctx.text_colour(el), ls=0.5)
    right = w - 14
    if st.alone:
        pw = measure(th.font_heading, 17, "ALONE", 1.0) + 18
        b.rrect(right - pw, h / 2 - 14, pw, 28, 14, th.accent, None, 0)
        ctx.label(th.font_heading, 17, right - pw / 2, h / 2 + 6, "ALONE", "#16181dff", align="center", ls=1.0)
        right -= pw + 8
    if team is None:
        ctx.label(th.font_body, 15, right, 25, "CALLED BY", th.muted, align="right", ls=2.0)
        ctx.label(th.font_heading, 22, right, 51, ctx.name(st.maker).upper(), ctx.text_colour(el), align="right", width=w - x - 130)
    b.restore()


def _title(ctx: Ctx, el: Element) -> None:
    st, th = ctx.state, ctx.theme
    w, h = SIZES["title"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.b.rrect(w - 8, 0, 8, h, 4, th.accent, None, 0)
    title = (ctx.title or "Euchre").upper()
    ctx.label(th.font_heading, el.style.font_size or 26, w - 22, 34, title, ctx.text_colour(el), align="right", width=w - 40, ls=1.0)
    sub = f"DEAL {st.deal + 1}"
    if st.calls and st.calls[-1].round == 2 and st.trump_code is None:
        sub += " \u00b7 ROUND 2"
    ctx.label(th.font_body, 17, w - 22, 58, sub, th.muted, align="right", ls=2.0)


def _kitty(ctx: Ctx, el: Element) -> None:
    st, th = ctx.state, ctx.theme
    w, h = SIZES["kitty-tracker"]
    if st.up_card is None:
        return
    ctx.panel(0, 0, w, h, el=el)
    ctx.label(th.font_body, 15, w / 2, 24, "KITTY", th.muted, align="center", ls=3.0)
    s = 0.62
    up = st.up_card_state
    face = up is UpCardState.FACE_UP
    card(ctx, ctx.sprite_id(st.up_card if face else None), 56, 104, s=s, alpha=1.0 if up is not UpCardState.TAKEN else 0.35)
    cap = {UpCardState.FACE_UP: "UP CARD", UpCardState.TURNED_DOWN: "TURNED", UpCardState.TAKEN: "PICKED UP"}[up]
    ctx.label(th.font_body, 14, 56, 180, cap, th.muted, align="center", ls=1.0)
    if st.discard is not None and st.kind is not StepKind.DISCARD:
        card(ctx, ctx.sprite_id(st.discard, face=ctx.face_up(st.dealer)), 144, 104, s=s)
        ctx.label(th.font_body, 14, 144, 180, "DISCARD", th.muted, align="center", ls=1.0)
    elif st.kind is StepKind.DISCARD and st.discard is not None:
        a = ctx.b.tween(ctx.run * 0.8, ctx.run, 0.0, 1.0, "linear")
        card(ctx, ctx.sprite_id(st.discard, face=ctx.face_up(st.dealer)), 144, 104, s=s, alpha=a)


def _played(ctx: Ctx) -> list[Card]:
    st = ctx.state
    cards = [c for t in st.tricks for c in t.cards]
    if st.trick is not None and st.trick not in st.tricks:
        cards += list(st.trick.cards)
    return [resolve(c, st.trump) for c in cards]


def _suits(ctx: Ctx, el: Element) -> None:
    st, th, b = ctx.state, ctx.theme, ctx.b
    w, h = SIZES["suit-tracker"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.label(th.font_body, 15, 16, 26, "CARDS PLAYED", th.muted, ls=2.0)
    played = _played(ctx)
    lowest = min([int(c.rank) for c in played if c.rank is not None] + [9])
    ranks = [r for r in Rank if int(r) >= lowest]
    col = (w - 64) / len(ranks)
    for row, suit in enumerate((Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)):
        y = 40 + row * 34
        if st.trump is suit:
            b.rrect(8, y, w - 16, 32, 6, th.accent + "26", th.accent + "80", 1.0)
        b.path(suit_path(suit, 18, y + 5, 22), "#ffffffff" if suit.colour == "black" else "#ff5a6eff", None, 0)
        for i, r in enumerate(ranks):
            gone = any(c.suit is suit and c.rank == r for c in played)
            label = "10" if r == Rank.TEN else r.letter
            colour = ctx.text_colour(el) if not gone else "#ffffff38"
            ctx.label(th.font_heading, 21, 60 + col * i + col / 2, y + 24, label, colour, align="center")
            if gone:
                b.rrect(60 + col * i + 6, y + 15, col - 12, 2, 1, "#ffffff60", None, 0)


def _tricks(ctx: Ctx, el: Element) -> None:
    st, th = ctx.state, ctx.theme
    w, h = SIZES["trick-tracker"]
    ctx.panel(0, 0, w, h, el=el)
    ctx.label(th.font_body, 15, 16, 26, "TRICKS", th.muted, ls=2.0)
    for i, t in enumerate(st.tricks[:5]):
        y = 54 + i * 25
        ctx.label(th.font_heading, 19, 16, y, str(i + 1), th.muted)
        x = 40.0
        for c in t.cards:
            c = resolve(c, st.trump)
            txt = ("10" if c.rank == Rank.TEN else c.rank.letter) if c.rank is not None else "?"
            colour = suit_colour(c.suit, th.cards) if c.suit is not None else th.text
            colour = "#ff6b7dff" if c.suit is not None and c.suit.colour == "red" else "#ffffffff"
            ctx.label(th.font_heading, 19, x, y, txt, colour)
            if c.suit is not None:
                ctx.b.path(suit_path(c.suit, x + 17, y - 14, 14), colour, None, 0)
            x += 44
        if t.winner is not None:
            ctx.b.rrect(w - 128, y - 17, 6, 20, 3, ctx.team_colour(t.winner % 2), None, 0)
            ctx.label(th.font_heading, 19, w - 116, y, ctx.name(t.winner).upper(), ctx.text_colour(el), width=104)


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
    ctx.label(th.font_body, 15, pad + 8, pad + 14, "ANALYSIS", th.muted, ls=3.0)
    y = pad + 14 + size + 8
    max_lines = int((h - y + size * 0.3) // (size * 1.2))
    for note in notes:
        tag, body = parse_quality(note)
        indent = 0.0
        x = pad + 8
        if tag is not None:
            colour = th.quality_colours.get(tag, th.accent)
            word = f"{tag}  {_QUALITY_WORD[tag]}"
            bw = measure(th.font_heading, size * 0.72, word, 1.0) + 18
            b.rrect(x, y - size * 0.82, bw, size * 1.05, 5, colour, None, 0)
            ctx.label(th.font_heading, size * 0.72, x + 9, y - size * 0.08, word, "#ffffffff", ls=1.0)
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
        kicker, head, colour = "GAME OVER", f"{ctx.team_short(st.winner).upper()} WIN", ctx.team_colour(st.winner)
        line = f"{st.score[st.winner]} \u2013 {st.score[1 - st.winner]}"
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
            kicker = ctx.team_name(team).upper()
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
    ctx.label(th.font_heading, 24, w / 2, 46, kicker, colour if colour != th.muted else th.muted, align="center", ls=4.0, width=w - 60)
    # a headline may shrink further than a name plate before it loses letters
    ctx.label(th.font_title, 72, w / 2, 122, head, ctx.text_colour(el), align="center", ls=1.5, width=w - 60, min_scale=0.5)
    ctx.label(th.font_heading, 30, w / 2, 168, line, th.accent, align="center", ls=2.0)
    b.restore()
