"""engine/codec."""
