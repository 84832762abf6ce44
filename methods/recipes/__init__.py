"""recipes package."""
