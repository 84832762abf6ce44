"""factorial package."""
