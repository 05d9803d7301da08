"""overlay: the service and the tools around it, one folder per concern.

- ``service/``: the one-box aiohttp service (``create_app``), channels and their parts, the
  Director, feeds, persistence, the socket protocol and the routes (``service/routes/``);
- ``cluster/``: ``serve --redis``, several processes sharing channels through Redis; it
  plugs into the service through ``service.app.ScaleOut``;
- ``video/``: the render job, the PyAV writer, sync to a match video, batch and Ray rendering;
- ``browser/``: the system Chromium, headless capture of the page, live inject into a stream;
- ``cli/``: the ``euchre-overlay`` command, one module per subcommand;
- ``bench/``: the benchmarks, tools about the product outside its import graph;
- ``static/``: the page player's files (HTML, JS, the op table, the OGraf graphic).

Which folder may import which is a table in ``tests/project/test_architecture.py``.
"""
