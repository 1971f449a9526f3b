"""One version everywhere: `check` that every place names wavegen/__init__.py's version, `bump X.Y.Z` to move them all."""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION = r"(\d+\.\d+\.\d+(?:[-+.][0-9A-Za-z.]+)?)"
SOURCE = ("wavegen/__init__.py", rf'^__version__ = "{VERSION}"$')

# file -> patterns whose group 1 is a version that must equal the package's (each must match at least once).
PLACES: dict[str, list[str]] = {
    "Dockerfile": [rf"^ARG VERSION={VERSION}$"],
    "plugins/helm/wavegen/plugin.yaml": [rf'^version: "{VERSION}"$'],
    "plugins/argocd/sidecar-patch.yaml": [rf"ghcr\.io/wavegen/wavegen:{VERSION}"],
    "docs/argocd.md": [rf"ghcr\.io/wavegen/wavegen:{VERSION}"],
    "docs/container.md": [rf"ghcr\.io/wavegen/wavegen:{VERSION}"],
    "docs/watch.md": [rf"ghcr\.io/you/wavegen:{VERSION}"],
    "README.md": [
        rf"wavegen/wavegen@v{VERSION}",
        rf"^  rev: v{VERSION}$",
        rf"ghcr\.io/wavegen/wavegen:{VERSION}",
        rf"charts/wavegen --version {VERSION}",
    ],
    "docs/github-action.md": [rf"wavegen/wavegen@v{VERSION}"],
    "docs/pre-commit.md": [rf"^    rev: v{VERSION}$"],
    "charts/wavegen/Chart.yaml": [rf"^version: {VERSION}$", rf'^appVersion: "{VERSION}"$'],
    "charts/wavegen/README.md": [rf"charts/wavegen --version {VERSION}"],
}


def package_version(root: Path) -> str:
    match = re.search(SOURCE[1], (root / SOURCE[0]).read_text(), re.M)
    if not match:
        raise SystemExit(f"{SOURCE[0]}: no __version__ line")
    return match.group(1)


def disagreements(root: Path) -> list[str]:
    version = package_version(root)
    problems = []
    for name, patterns in PLACES.items():
        path = root / name
        if not path.exists():
            problems.append(f"{name}: missing")
            continue
        text = path.read_text()
        for pattern in patterns:
            found = [(text.count("\n", 0, m.start()) + 1, m.group(1)) for m in re.finditer(pattern, text, re.M)]
            if not found:
                problems.append(f"{name}: nothing matches {pattern!r}")
            problems += [f"{name}:{line}: {seen} (the package is {version})" for line, seen in found if seen != version]
    return problems


def bump(root: Path, new: str, today: str) -> None:
    if not re.fullmatch(VERSION, new):
        raise SystemExit(f"not a version: {new}")
    old = package_version(root)
    for name, patterns in [(SOURCE[0], [SOURCE[1]]), *PLACES.items()]:
        path = root / name
        text = path.read_text()
        for pattern in patterns:
            text = re.sub(pattern, lambda m: m.group(0).replace(m.group(1), new), text, flags=re.M)
        path.write_text(text)
    changelog = root / "CHANGELOG.md"
    text = changelog.read_text()
    if "## [Unreleased]" not in text:
        raise SystemExit("CHANGELOG.md: no [Unreleased] section")
    text = text.replace("## [Unreleased]", f"## [Unreleased]\n\n## [{new}] - {today}", 1)
    changelog.write_text(text)
    print(f"{old} -> {new}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check")
    sub.add_parser("show")
    bumping = sub.add_parser("bump")
    bumping.add_argument("version")
    bumping.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args(argv)
    if args.command == "show":
        print(package_version(args.root))
        return 0
    if args.command == "bump":
        bump(args.root, args.version, args.date)
    problems = disagreements(args.root)
    for problem in problems:
        print(f"versions: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
