"""Video out: the render job, the PyAV writer, sync to a match video, batch rendering in
pieces and its Ray driver.  Frames come from the pure renderer
(:class:`renderer.frames.FrameSource`)."""
