"""The render job: what to draw and when, built once for ``render``, ``capture``,
``composite`` and each game of a batch (:mod:`overlay.video.batch`, ``render --ray``).

:func:`load_job` reads a game and the settings named by :class:`JobOptions` (the options of
those commands) into a :class:`Job`: the steps, the renderer models, the size, the frame
rate and the :class:`renderer.frames.Schedule`.  :func:`frame_source` is the one place that
turns a job's models into a :class:`renderer.frames.FrameSource`, so a Ray segment draws
what one process draws.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from renderer.gametitle import MatchGame, labels_of

if TYPE_CHECKING:
    from engine.load import LoadedGame
    from engine.ruleset import Ruleset
    from engine.state import GameState, Timeline
    from renderer.frames import FrameSource, Schedule
    from renderer.matchdata import MatchData
    from renderer.onair import Views
    from renderer.settings import ChannelSettings, OutputName, RenderSettings
    from renderer.theme import Theme
    from renderer.timing import Timing
    from renderer.view import View

__all__ = ["Job", "JobOptions", "load_job", "read_channel_settings", "EXPORT_IMAGES", "frame_source", "output_views", "parse_clock", "parse_deals", "parse_size", "load_view"]


@dataclass(frozen=True)
class JobOptions:
    """What a render command was asked to draw: the files and options of ``render``,
    ``capture`` and ``composite`` (``add_job_arguments`` in :mod:`overlay.cli.options`)."""

    game: str
    fps: str = "30"
    size: str | None = None
    channel_settings: str | None = None
    output_name: OutputName = "program"
    view: str | None = None
    theme: str | None = None
    timing: str | None = None
    deals: str | None = None
    sync: str | None = None
    #: folder of the studio's uploads; None: the default data folder's, when it exists
    uploads: Path | None = None
    #: "full", "public", "none", or None: as ``channel_settings`` say (off without them)
    analysis: str | None = None
    #: ``--from``/``--to``: a window of the video (seconds or ``[h:]mm:ss[.fff]``), None: its start/end
    start: str | None = None
    end: str | None = None
    #: ``--match-game N``: of a match file, game N (from 1)
    match_game: int | None = None

    @classmethod
    def of(cls, args: Any) -> JobOptions:
        """The options of a parsed command line (an ``argparse.Namespace``); an option the
        command does not have keeps its default."""
        names = cls.__dataclass_fields__
        return cls(**{name: getattr(args, name) for name in names if hasattr(args, name)})


@dataclass
class Job:
    """What to draw: the steps, the renderer models and when each step starts."""

    source: str
    steps: Sequence[GameState]
    title: str | None
    view: Views  # the output's view, and the view switches' from their step
    theme: Theme | None  # None: the default theme
    timing: Timing
    size: tuple[int, int]
    fps: Fraction
    schedule: Schedule
    video_url: str | None = None
    match: MatchData | None = None  # of --channel-settings
    uploads: Path | None = None  # where the images the scenes name are stored
    timeline: Timeline | None = None  # of ``steps``: the statistics extras' numbers
    rules: Ruleset | None = None  # of the game (for --analysis)
    analysis: str | None = None  # "full", "public" or None (no analysis drawn)
    game: MatchGame | None = None  # which game of a match, drawn as the pages draw it

    def images(self) -> Callable[[Sequence[str]], dict[str, bytes]] | None:
        """Reads the uploaded images the scenes name (``None``: no uploads folder)."""
        from studio.uploads import read_images

        folder = self.uploads
        return None if folder is None else (lambda ids: read_images(folder, ids))

    def frames(self) -> FrameSource:
        """A :class:`renderer.frames.FrameSource` over this job."""
        images = self.images()
        return frame_source(
            self.steps,
            self.schedule,
            view=self.view,
            theme=self.theme,
            timing=self.timing,
            title=self.title,
            size=self.size,
            match=self.match,
            images=images,
            timeline=self.timeline,
            rules=self.rules,
            analysis=self.analysis,
            game=self.game,
        )


def parse_deals(text: str | None, steps: Sequence[GameState]) -> tuple[int, int] | None:
    """``"3-5"`` -> the first and last step of deals 3..5 (1-based positions)."""
    if not text:
        return None
    try:
        lo_text, _, hi_text = text.partition("-")
        lo, hi = int(lo_text), int(hi_text or lo_text)
    except ValueError:
        raise OSError(f"--deals {text!r}: expected N or N-M such as 3-5") from None
    main = [s for s in steps if s.branch is None]
    deals = sorted({s.deal for s in main})
    if not (1 <= lo <= hi <= len(deals)):
        raise OSError(f"--deals {text!r}: the game has deals 1..{len(deals)}")
    chosen = set(deals[lo - 1 : hi])
    idx = [i for i, s in enumerate(steps) if s.deal in chosen]
    return idx[0], idx[-1]


M = TypeVar("M", bound=BaseModel)


def read_json_file(path: str | Path, option: str) -> Any:
    """The JSON document of a file given with ``option``: UTF-8 (with or without a byte-order
    mark, as Notepad writes it) or UTF-16/32 with theirs (Windows PowerShell), as the engine
    reads a game.

    Raises:
        OSError: unreadable, or not JSON (naming the option, the file, line and column).
    """
    from engine.codec import parse_json_text
    from engine.errors import CodecError

    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise OSError(f"{option} {path}: {exc.strerror or exc}") from None
    try:
        return parse_json_text(data, source=str(path))
    except CodecError as exc:
        raise OSError(f"{option} {exc}") from None


def validated(cls: type[M], doc: Any, path: str | Path, option: str) -> M:
    """``doc`` (read from ``path``) as ``cls``.

    Raises:
        OSError: the model refuses it: one line naming the option, the file and each field.
    """
    try:
        return cls.model_validate(doc)
    except ValidationError as exc:
        from ..service.refusals import pydantic_text

        raise OSError(f"{option} {path}: {pydantic_text(exc)}") from None


def _model(path: str | None, cls: type[M], option: str) -> M | None:
    """The ``cls`` document in the JSON file ``path`` (None: no path given)."""
    if not path:
        return None
    return validated(cls, read_json_file(path, option), path, option)


def load_job(
    options: JobOptions,
    *,
    size: tuple[int, int] | None = None,
    fps: Fraction | None = None,
    from_zero: bool = False,
    loaded: LoadedGame | None = None,
    which: MatchGame | None = None,
) -> Job:
    """Load the game and settings named by ``options``.

    Step start times are the Director's (:class:`overlay.service.director.StepTimes` over
    :func:`renderer.timing.durations_of`), so a render shows what a channel plays.
    ``loaded`` (an :class:`engine.load.LoadedGame`, e.g. one game of a match file) is
    drawn instead of reading ``options.game``; ``which`` says which game of a match it is
    ("Game 2 of 3 \u00b7 match 1\u20130", :mod:`renderer.gametitle`), drawn on the title's
    last line as the pages draw it.  A match file takes ``options.match_game``.

    Raises:
        OSError: a file is missing or an option is malformed.
        EgnError: the game or the sync file is refused (names the file and place).
    """
    from renderer.frames import Schedule
    from renderer.onair import Views
    from renderer.settings import ChannelSettings, RenderSettings
    from renderer.theme import Theme
    from renderer.timing import Timing, durations_of

    from ..service.director import StepTimes
    from .sync import parse_sync, sync_starts
    from .writer import parse_fps

    source = options.game
    if loaded is not None:
        game, source = loaded, loaded.source
    else:
        game, picked = _one_game(Path(options.game), options.match_game)
        if picked is not None:
            source, which = picked
    steps = game.timeline.steps
    if not steps:
        raise OSError(f"{source}: the game has no steps")
    theme: Theme | None = None
    timing: Timing | None = None
    match: MatchData | None = None
    views = Views()
    settings: ChannelSettings | None = None
    exported: Path | None = None
    if options.channel_settings:
        settings, exported = read_channel_settings(Path(options.channel_settings))
        rs = RenderSettings(settings)
        views, theme, timing, match = output_views(rs, options.output_name), rs.theme, rs.timing, rs.match
    if options.view:
        views = Views(load_view(options.view))
    theme = _model(options.theme, Theme, "--theme") or theme
    timing = _model(options.timing, Timing, "--timing") or timing or Timing()
    durations = durations_of(steps, timing)
    starts = list(StepTimes.of(durations).starts[: len(durations)])
    video_url = None
    if options.sync:
        sync = parse_sync(Path(options.sync).read_bytes(), steps, source=Path(options.sync).name)
        starts = sync_starts(starts, sync.stamps)
        video_url = sync.video_url
    if size is None:
        size = parse_size(options.size)
    if size is None:
        from renderer.view import default_view

        v = views.base or default_view()
        size = (v.width, v.height)
    try:
        rate = fps or parse_fps(options.fps)
    except ValueError as exc:
        raise OSError(f"--fps: {exc}") from None
    schedule = Schedule.of(starts, durations, steps=parse_deals(options.deals, steps), from_zero=from_zero or bool(options.sync))
    if options.start is not None or options.end is not None:
        start, end = parse_clock(options.start, "--from"), parse_clock(options.end, "--to")
        try:
            schedule = schedule.window(rate, start, end)
        except ValueError as exc:
            flags = " ".join(f"{flag} {text}" for flag, text in (("--from", options.start), ("--to", options.end)) if text is not None)
            raise OSError(f"{source}: {flags}: {exc}") from None
    return Job(
        source=source,
        steps=steps,
        title=game.timeline.title,
        game=which,
        view=views,
        theme=theme,
        timing=timing,
        size=size,
        fps=rate,
        schedule=schedule,
        video_url=video_url,
        match=match,
        uploads=_uploads(options) if exported is None or options.uploads is not None else exported,
        timeline=game.timeline,
        rules=game.document.metadata.ruleset,
        analysis=_analysis_mode(options, settings),
    )


def _one_game(path: Path, number: int | None) -> tuple[LoadedGame, tuple[str, MatchGame] | None]:
    """The game a command draws from ``path``: the game of a game file, or game ``number``
    (from 1) of a match file with its name and how its scenes say which game it is.

    Raises:
        OSError: a match without ``number`` (or with one it does not have), or ``number``
            given for a game file; said with what to give.
        EgnError: the file is refused.
    """
    from engine.load import LoadedMatch, load_any

    loaded = load_any(path.read_bytes(), source=path.name)
    if not isinstance(loaded, LoadedMatch):
        if number is not None:
            raise OSError(f"--match-game {number}: {path.name} is a game, not a match")
        return loaded, None
    listed = loaded.match.get("games") or []
    total = len(listed)
    if number is None:
        raise OSError(f"{path.name}: a match of {total} game{'' if total == 1 else 's'}: draw one with --match-game N (1 to {total}), or render it whole (a video per game)")
    if not 1 <= number <= total:
        raise OSError(f"--match-game {number}: {path.name} has games 1 to {total}")
    name = f"{path.name} game {number - 1}"  # as the engine names a match's games
    game = next((g for g in loaded.games if g.source == name), None)
    if game is None:
        raise OSError(f"{path.name}: game {number} cannot be read (load it alone with inspect to see why)")
    return game, (f"{path.name} game {number}", labels_of(loaded)[number - 1])


def output_views(rs: RenderSettings, output: OutputName) -> Views:
    """The :class:`renderer.onair.Views` of ``output``: its view, and from each view switch's
    step the view :meth:`renderer.settings.RenderSettings.view` puts on air there (what
    the channel's page shows at that step)."""
    from renderer.onair import Views

    steps = sorted({sw.step for sw in rs.settings.view_switches})
    return Views(rs.view(output), tuple((s, rs.view(output, s)) for s in steps))


def _analysis_mode(options: JobOptions, settings: ChannelSettings | None) -> str | None:
    """``--analysis``: full or public (``none``: off); without it, what the channel's settings
    give the output (:func:`overlay.service.analysis.policy`'s rule: on for program and
    preview, the clean output's policy for clean).  The clean output's view is always public."""
    mode = options.analysis
    if mode is None and settings is not None and settings.analysis.enabled:
        mode = "full" if options.output_name != "clean" or settings.analysis.clean == "public" else None
    if mode == "none":
        return None
    if mode is not None and options.output_name == "clean":
        return "public"
    return mode


#: the key of a studio export (GET /studio/api/channels/{id}/export) that carries its images
EXPORT_IMAGES = "images"


def read_channel_settings(path: Path) -> tuple[ChannelSettings, Path | None]:
    """A channel's settings document (``GET …/settings``), or the studio's full export of
    it: the same document with the uploaded images it names under :data:`EXPORT_IMAGES`
    (file name -> base64), which are written to a folder of their own (returned; it lives as
    long as the process and is removed when it exits), so a render needs no data folder.

    Raises:
        OSError: unreadable, not JSON, settings the model refuses, or an image that is not base64.
    """
    import atexit
    import base64
    import binascii
    import shutil
    import tempfile

    from renderer.settings import ChannelSettings

    doc = read_json_file(path, "--channel-settings")
    images = None
    if isinstance(doc, dict):
        images = doc.pop(EXPORT_IMAGES, None)
        doc.pop("export", None)  # what made the file, when
    settings = validated(ChannelSettings, doc, path, "--channel-settings")
    if not images:
        return settings, None
    folder = Path(tempfile.mkdtemp(prefix="euchre-overlay-images-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for name, data in images.items():
        if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
            raise OSError(f"{path}: image name {str(name)[:60]!r} is not a file name")
        try:
            (folder / name).write_bytes(base64.b64decode(str(data), validate=True))
        except (binascii.Error, ValueError) as exc:
            raise OSError(f"{path}: image {name}: not base64 ({exc})") from None
    return settings, folder


def _uploads(options: JobOptions) -> Path | None:
    """``--uploads``, else the default server data folder's uploads when it exists."""
    folder = options.uploads
    if folder is None:
        from ..service.store import default_data_dir

        folder = default_data_dir() / "uploads"
    return folder if folder.is_dir() else None


def frame_source(
    steps: Sequence[GameState],
    schedule: Schedule,
    *,
    view: View | Views | None,
    theme: Theme | None,
    timing: Timing | None,
    title: str | None,
    size: tuple[int, int],
    match: MatchData | None,
    images: Callable[[Sequence[str]], dict[str, bytes]] | None,
    timeline: Timeline | None = None,
    rules: Ruleset | None = None,
    analysis: str | None = None,
    game: MatchGame | None = None,
) -> FrameSource:
    """The :class:`renderer.frames.FrameSource` of a game as ``render`` draws it: the
    statistics extras from ``timeline``, the analysis layer with ``analysis`` ("full" or
    "public"), ``game`` which game of a match; one place, so a Ray segment draws what one
    process draws."""
    from renderer.frames import FrameSource
    from renderer.statboard import stats_book

    layer = None
    if analysis is not None:
        from renderer.analysis import GameAnalysis

        layer = GameAnalysis(steps, rules, public=analysis == "public")
    return FrameSource(
        steps,
        schedule,
        view=view,
        theme=theme,
        timing=timing,
        title=title,
        size=size,
        match=match,
        images=images,
        stats=None if timeline is None else stats_book(timeline).at,
        analysis=layer,
        public=analysis == "public",
        game=game,
    )


def parse_clock(text: str | None, option: str) -> float | None:
    """:func:`renderer.timing.parse_clock` of an option's text (``None``: no text).

    Raises:
        OSError: not such a time (names ``option``).
    """
    from renderer.timing import parse_clock as clock

    if text is None:
        return None
    try:
        return clock(text)
    except ValueError as exc:
        raise OSError(f"{option} {text!r}: {exc}") from None


def parse_size(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise OSError(f"--size {text!r}: expected WxH such as 1920x1080") from None
    if not (16 <= w <= 7680 and 16 <= h <= 4320):
        raise OSError(f"--size {text!r}: out of range")
    return w, h


def load_view(path: str) -> View:
    from renderer.legacy import views_from_legacy
    from renderer.view import View

    data = read_json_file(path, "--view")
    if isinstance(data, dict) and "views" in data:
        try:
            views = views_from_legacy(data["views"])
        except ValueError as exc:  # (pydantic's ValidationError is one)
            raise OSError(f"--view {path}: its views: {str(exc).splitlines()[0]}") from None
        if not views:
            raise OSError(f"{path}: no views")
        return views[0]
    return validated(View, data, path, "--view")
