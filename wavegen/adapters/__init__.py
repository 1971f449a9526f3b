"""Thin adapters: CLI, KRM function, helm post-renderer, GitHub Action, controller."""
