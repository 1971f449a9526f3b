"""Pipeline integrations: KRM function, helm post-renderer, GitHub Action, pre-commit, kustomize names."""
