"""Bytes to documents and back: split, parse what matters, splice annotation lines."""
