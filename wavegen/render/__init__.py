"""Reports for people and machines: text, JSON, Markdown and Mermaid, with their jinja2 templates."""
