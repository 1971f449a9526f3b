#!/usr/bin/env bash
# The release, as one script for GitHub's release workflow and for the test that proves it here.
#
#   hack/release.sh bump X.Y.Z   every version place -> X.Y.Z, CHANGELOG's Unreleased -> [X.Y.Z]
#   hack/release.sh check        every version place agrees (hack/versions.py check)
#   hack/release.sh build        sdist + wheel (twine check --strict), the image, the chart package
#   hack/release.sh publish      push the image and the chart, sign the image, attach its SBOM
#   hack/release.sh verify       cosign verify the pushed image (signature and SBOM attestation)
#   hack/release.sh all          check, build, publish, verify
#
# Settings (environment), so GitHub and this machine run the same script:
#   WAVEGEN_REGISTRY     where to push, e.g. ghcr.io/wavegen or 127.0.0.1:5000 (required to publish)
#   WAVEGEN_INSECURE=1   the registry speaks plain HTTP (a loopback test registry)
#   WAVEGEN_SIGN         key (default: WAVEGEN_COSIGN_KEY / WAVEGEN_COSIGN_PUB, password in
#                        COSIGN_PASSWORD) or keyless (OIDC identity of the GitHub workflow)
#   WAVEGEN_TLOG=1       record signatures in the transparency log (Rekor); 0 signs offline and
#                        verifies with --insecure-ignore-tlog (no Sigstore service reachable here)
#   WAVEGEN_IDENTITY, WAVEGEN_ISSUER   keyless verify: the certificate identity and OIDC issuer
#   WAVEGEN_PLATFORMS    the image's platforms (default: linux/amd64 linux/arm64), one manifest list
#   WAVEGEN_OUT          output directory (default build/release)
#   WAVEGEN_TOOLS_DIR    the tools of hack/tools.sh (helm3, cosign, syft)
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${WAVEGEN_OUT:-build/release}
TOOLS=${WAVEGEN_TOOLS_DIR:-$HOME/.cache/wavegen-tools}/bin
PYTHON=${PYTHON:-python3}
SIGN=${WAVEGEN_SIGN:-key}
TLOG=${WAVEGEN_TLOG:-1}
INSECURE=${WAVEGEN_INSECURE:-0}
PLATFORMS=${WAVEGEN_PLATFORMS:-linux/amd64 linux/arm64}
VERSION=$("$PYTHON" hack/versions.py show)

log() { echo "release: $*" >&2; }
die() { echo "release: $*" >&2; exit 1; }

registry() { [ -n "${WAVEGEN_REGISTRY:-}" ] || die "WAVEGEN_REGISTRY is not set"; echo "$WAVEGEN_REGISTRY"; }
image_ref() { echo "$(registry)/wavegen:$VERSION"; }
digest_ref() { echo "$(registry)/wavegen@$(cat "$OUT/image.digest")"; }

# the flags every cosign call needs for this registry and signing mode
cosign_registry_flags() {
  if [ "$INSECURE" = 1 ]; then echo "--allow-http-registry --allow-insecure-registry"; fi
}
cosign_sign_flags() {
  if [ "$SIGN" = key ]; then
    echo "--key ${WAVEGEN_COSIGN_KEY:?WAVEGEN_COSIGN_KEY: the private key}"
  fi
  if [ "$TLOG" = 0 ]; then
    # cosign 3 always uploads unless its signing config names no transparency log
    [ -s "$OUT/signing-config.json" ] || "$TOOLS/cosign" signing-config create --out "$OUT/signing-config.json" >/dev/null
    echo "--signing-config $OUT/signing-config.json"
  fi
}
cosign_verify_flags() {
  if [ "$SIGN" = key ]; then
    echo "--key ${WAVEGEN_COSIGN_PUB:?WAVEGEN_COSIGN_PUB: the public key}"
  else
    echo "--certificate-identity ${WAVEGEN_IDENTITY:?} --certificate-oidc-issuer ${WAVEGEN_ISSUER:-https://token.actions.githubusercontent.com}"
  fi
  if [ "$TLOG" = 0 ]; then echo "--insecure-ignore-tlog"; fi
}

cmd_check() {
  "$PYTHON" hack/versions.py check
  log "every version place says $VERSION"
}

cmd_bump() {
  [ $# -eq 1 ] || die "usage: hack/release.sh bump X.Y.Z"
  "$PYTHON" hack/versions.py bump "$1"
}

cmd_build() {
  mkdir -p "$OUT"
  rm -rf "$OUT/dist" "$OUT/chart"
  log "python -m build -> $OUT/dist"
  "$PYTHON" -m build --outdir "$OUT/dist" . >"$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log" >&2; die "build failed"; }
  "$PYTHON" -m twine check --strict "$OUT"/dist/*
  # one image per platform (tagged IMAGE-ARCH here only), gathered in a manifest list named IMAGE
  buildah manifest rm "$(image_ref)" >/dev/null 2>&1 || buildah rmi --force "$(image_ref)" >/dev/null 2>&1 || true
  buildah manifest create "$(image_ref)" >/dev/null
  local platform
  for platform in $PLATFORMS; do
    log "image $(image_ref) for $platform"
    WAVEGEN_PLATFORM=$platform WAVEGEN_IMAGE="$(image_ref)-${platform#linux/}" bash hack/image.sh >/dev/null
    buildah manifest add "$(image_ref)" "$(image_ref)-${platform#linux/}" >/dev/null
  done
  log "chart -> $OUT/chart"
  "$TOOLS/helm3" package charts/wavegen --destination "$OUT/chart" >/dev/null
  ls "$OUT/chart/wavegen-$VERSION.tgz" >/dev/null
}

cmd_publish() {
  local tls=() plain=() reg
  reg=$(registry)
  mkdir -p "$OUT"
  if [ "$INSECURE" = 1 ]; then tls=(--tls-verify=false); plain=(--plain-http); fi
  log "push $(image_ref)"
  buildah manifest push --all --quiet "${tls[@]}" --digestfile "$OUT/image.digest" "$(image_ref)" "docker://$(image_ref)"
  log "pushed $(digest_ref) ($PLATFORMS)"
  log "helm push wavegen-$VERSION.tgz oci://$reg/charts"
  "$TOOLS/helm3" push "$OUT/chart/wavegen-$VERSION.tgz" "oci://$reg/charts" "${plain[@]}" >"$OUT/helm-push.log" 2>&1 ||
    { cat "$OUT/helm-push.log" >&2; die "helm push failed"; }
  # shellcheck disable=SC2046
  "$TOOLS/cosign" sign --yes $(cosign_sign_flags) $(cosign_registry_flags) "$(digest_ref)" 2>"$OUT/sign.log" ||
    { cat "$OUT/sign.log" >&2; die "cosign sign failed"; }
  log "signed $(digest_ref) ($SIGN, tlog=$TLOG)"
  local syft_env=()
  if [ "$INSECURE" = 1 ]; then syft_env=(SYFT_REGISTRY_INSECURE_USE_HTTP=true); fi
  env "${syft_env[@]}" "$TOOLS/syft" scan --quiet "registry:$(digest_ref)" -o "spdx-json=$OUT/sbom.spdx.json"
  # shellcheck disable=SC2046
  "$TOOLS/cosign" attest --yes --type spdxjson --predicate "$OUT/sbom.spdx.json" $(cosign_sign_flags) $(cosign_registry_flags) \
    "$(digest_ref)" 2>"$OUT/attest.log" || { cat "$OUT/attest.log" >&2; die "cosign attest failed"; }
  log "SBOM attached ($(wc -c <"$OUT/sbom.spdx.json") bytes, SPDX JSON)"
}

cmd_verify() {
  # shellcheck disable=SC2046
  "$TOOLS/cosign" verify $(cosign_verify_flags) $(cosign_registry_flags) "$(digest_ref)" >"$OUT/verify.json" 2>"$OUT/verify.log" ||
    { cat "$OUT/verify.log" >&2; die "cosign verify failed"; }
  # shellcheck disable=SC2046
  "$TOOLS/cosign" verify-attestation --type spdxjson $(cosign_verify_flags) $(cosign_registry_flags) "$(digest_ref)" \
    >/dev/null 2>"$OUT/verify-attestation.log" || { cat "$OUT/verify-attestation.log" >&2; die "cosign verify-attestation failed"; }
  log "verified $(digest_ref): signature and SBOM attestation"
}

case ${1:-} in
  bump) shift; cmd_bump "$@" ;;
  check) cmd_check ;;
  build) cmd_build ;;
  publish) cmd_publish ;;
  verify) cmd_verify ;;
  all) cmd_check; cmd_build; cmd_publish; cmd_verify ;;
  *) sed -n '2,22p' "$0" >&2; exit 2 ;;
esac
