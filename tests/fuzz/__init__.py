"""Bounded-time fuzz tests (hypothesis) of the stream engine."""
