"""renderer."""
