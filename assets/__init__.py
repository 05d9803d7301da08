"""assets."""
