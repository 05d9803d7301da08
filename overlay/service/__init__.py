"""The one-box service: the aiohttp app, channels and their parts, the Director, feeds,
persistence, the socket protocol and the routes.  It imports no other folder of ``overlay``:
the cluster installs itself through :class:`overlay.service.app.ScaleOut`."""
