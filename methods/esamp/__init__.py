"""ESamp (exploratory sampling) as a ``whitebox/`` method (:mod:`.esamp`); see README.md."""
