"""A regular package, so that ``tests.support`` is this folder even where an installed
distribution ships a top-level ``tests`` of its own."""
