"""overlay."""
