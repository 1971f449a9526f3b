#!/usr/bin/env bash
# Fetch argoproj/argo-rollouts' published Rollout CRD (manifests/crds/rollout-crd.yaml)
# through the Go module proxy, pinned and checksum-verified, into a cache outside the repo.
#
#   hack/argo-rollouts-crd.sh     # prints the path of the cached CRD
#
# Environment: WAVEGEN_TOOLS_DIR (default ~/.cache/wavegen-tools); the CRD lands in
# $WAVEGEN_TOOLS_DIR/argo-rollouts/<version>/rollout-crd.yaml. The e2e test
# tests/e2e/test_watch_kinds.py reads it from there.
set -euo pipefail

ARGO_ROLLOUTS_VERSION=v1.8.3
# go.sum line of the module zip (go also checks it against sum.golang.org).
ARGO_ROLLOUTS_SUM=h1:blbtQva4IK9r6gFh+dWkCrLnFdPOWiv9ubQYu36qeaA=

TOOLS_DIR=${WAVEGEN_TOOLS_DIR:-$HOME/.cache/wavegen-tools}
OUT=$TOOLS_DIR/argo-rollouts/$ARGO_ROLLOUTS_VERSION/rollout-crd.yaml
if [[ -s $OUT ]]; then
  echo "$OUT"
  exit 0
fi
command -v go >/dev/null || { echo "argo-rollouts-crd.sh: go is not installed" >&2; exit 1; }
export GOFLAGS=-mod=mod GOTOOLCHAIN=local GOWORK=off GO111MODULE=on

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Outside any module: go mod download needs no go.mod for an explicit module@version.
(cd "$work" && go mod download -json "github.com/argoproj/argo-rollouts@$ARGO_ROLLOUTS_VERSION") >"$work/info.json"
read -r dir sum < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["Dir"], d["Sum"])' "$work/info.json")
[[ $sum == "$ARGO_ROLLOUTS_SUM" ]] || { echo "argo-rollouts-crd.sh: checksum $sum, expected $ARGO_ROLLOUTS_SUM" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
cp "$dir/manifests/crds/rollout-crd.yaml" "$OUT.tmp"
chmod 644 "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "$OUT"
