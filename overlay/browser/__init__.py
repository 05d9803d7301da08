"""Clients driving Chromium or reading the service like one: the system Chromium's path and
flags, headless capture of the page and the OGraf graphic, live inject into a stream."""
