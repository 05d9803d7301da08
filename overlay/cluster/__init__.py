"""``serve --redis``: several service processes sharing their channels through Redis (the
Redis store, leases and takeovers, the relay of page sockets, forwarding to a channel's
owner).  Built on :mod:`overlay.service`, which never imports it."""
