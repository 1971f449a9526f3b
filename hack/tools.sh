#!/usr/bin/env bash
# Build the real programs wavegen's integration tests drive, pinned to exact
# versions, from the Go module proxy, into a cache directory outside the repo.
#
#   hack/tools.sh                 # every tool
#   hack/tools.sh helm3 kubectl   # only these
#
# Environment:
#   WAVEGEN_TOOLS_DIR   install root (default: ~/.cache/wavegen-tools);
#                       binaries land in $WAVEGEN_TOOLS_DIR/bin
#   GOCACHE, GOMODCACHE the usual Go caches (defaults are fine)
#
# A tool is rebuilt only when its binary is missing or does not report the
# pinned version, so a run with a warm cache takes seconds.  After the run
# $WAVEGEN_TOOLS_DIR/env.sh puts the tools on PATH (`. "$dir/env.sh"`).
set -euo pipefail

# ---- pins -------------------------------------------------------------------
KUSTOMIZE_VERSION=v5.8.2
HELM3_VERSION=v3.22.0
HELM4_VERSION=v4.3.1
ACT_VERSION=v0.2.89
KUBERNETES_VERSION=v1.37.1   # kubectl, kube-apiserver, kube-controller-manager
# (k8s.io/kubernetes v1.37.2: the module proxy refuses its source zip with
#  "403 This module version is not available", so the pin is v1.37.1)
ETCD_VERSION=v3.7.3
REGISTRY_VERSION=v3.1.2      # distribution's registry: the OCI registry of the release test
COSIGN_VERSION=v3.1.3
SYFT_VERSION=v1.57.0
ARGOCD_VERSION=v3.6.1        # one binary: repo-server, cmp-server, application-controller by argv[0]
ARGOCD_GO=go1.27.3           # Argo CD's go.mod needs it; the go command fetches it from the module proxy
# redis-server (for Argo CD's repo-server and application controller) is Debian's package,
# not built: its version is the distribution's (bookworm: 7.0.15), linked into bin/.
ALL_TOOLS=(kustomize helm3 helm4 kubectl act etcd kube-apiserver kube-controller-manager registry cosign syft argocd
  redis-server)

# ---- environment ------------------------------------------------------------
TOOLS_DIR=${WAVEGEN_TOOLS_DIR:-$HOME/.cache/wavegen-tools}
BIN=$TOOLS_DIR/bin
SRC=$TOOLS_DIR/src
mkdir -p "$BIN" "$SRC"
TOOLS_DIR=$(cd "$TOOLS_DIR" && pwd)
BIN=$TOOLS_DIR/bin
SRC=$TOOLS_DIR/src

command -v go >/dev/null || { echo "tools.sh: go is not installed" >&2; exit 1; }
export CGO_ENABLED=0
export GOFLAGS="-mod=mod -buildvcs=false"
export GOTOOLCHAIN=local   # never fetch a toolchain; use the installed go
export GOWORK=off
export GO111MODULE=on

START=$(date +%s)
log() { printf '%-24s %s\n' "$1" "$2"; }
die() { echo "tools.sh: $*" >&2; exit 1; }

# version_of NAME -> the command that prints NAME's version
version_cmd() {
  case $1 in
    kustomize) echo "version" ;;
    helm3 | helm4) echo "version --short" ;;
    kubectl) echo "version --client" ;;
    act | etcd | kube-apiserver | kube-controller-manager | registry) echo "--version" ;;
    cosign | syft) echo "version" ;;
    argocd) echo "version --client --short" ;;
    redis-server) echo "--version" ;;
    *) die "unknown tool $1" ;;
  esac
}
pin_of() {
  case $1 in
    kustomize) echo "$KUSTOMIZE_VERSION" ;;
    helm3) echo "$HELM3_VERSION" ;;
    helm4) echo "$HELM4_VERSION" ;;
    act) echo "$ACT_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    kubectl | kube-apiserver | kube-controller-manager) echo "$KUBERNETES_VERSION" ;;
    registry) echo "$REGISTRY_VERSION" ;;
    cosign) echo "$COSIGN_VERSION" ;;
    syft) echo "$SYFT_VERSION" ;;
    argocd) echo "$ARGOCD_VERSION" ;;
  esac
}

# reports_pin NAME: the installed binary runs and prints its pinned version
reports_pin() {
  local name=$1 out
  [[ -x $BIN/$name ]] || return 1
  # shellcheck disable=SC2046
  out=$("$BIN/$name" $(version_cmd "$name") 2>&1) || return 1
  # act and etcd print the version without its "v" ("act version 0.2.89")
  local bare re
  bare=$(pin_of "$name"); bare=${bare#v}
  re="(^|[^0-9.])v?${bare//./\\.}([^0-9.]|$)"
  grep -Eq -- "$re" <<<"$out" || return 1
  printf '%s' "$out" | head -n 1
}

check_built() {
  local name=$1 t0=$2 line
  if ! line=$(reports_pin "$name"); then
    echo "tools.sh: $name does not report $(pin_of "$name"):" >&2
    # shellcheck disable=SC2046
    "$BIN/$name" $(version_cmd "$name") >&2 || true
    exit 1
  fi
  log "$name" "$(pin_of "$name") built in $(($(date +%s) - t0))s  [$line]"
}

# module_info MOD@VER FIELD: a field of `go list -m -json` (GoMod, Time); reads
# only the module's go.mod and .info from the proxy, not its source
module_info() {
  local json
  json=$(cd "$TOOLS_DIR" && go list -m -json "$1") || die "cannot resolve $1"
  python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$json" "$2"
}

# go_install_to NAME MOD/PKG@VER LDFLAGS: go install into a scratch GOBIN, then
# move the binary to $BIN/NAME (helm 3 and helm 4 are both called "helm").
go_install_to() {
  local name=$1 target=$2 ldflags=$3 gobin
  gobin=$(mktemp -d "$TOOLS_DIR/.gobin.XXXXXX")
  GOBIN=$gobin go install -trimpath -ldflags "-s -w $ldflags" "$target"
  mv -f "$gobin"/* "$BIN/$name"
  rm -rf "$gobin"
}

build_kustomize() {
  local t0; t0=$(date +%s)
  go_install_to kustomize "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" \
    "-X sigs.k8s.io/kustomize/api/provenance.version=$KUSTOMIZE_VERSION"
  check_built kustomize "$t0"
}

build_helm() { # build_helm 3|4
  local major=$1 version t0 gomod k8sminor extra=""
  t0=$(date +%s)
  if [[ $major == 3 ]]; then version=$HELM3_VERSION; else version=$HELM4_VERSION; fi
  local mod=helm.sh/helm/v$major
  if [[ $major == 3 ]]; then
    # helm 3's default .Capabilities.KubeVersion follows its client-go minor
    gomod=$(module_info "$mod@$version" GoMod)
    k8sminor=$(sed -nE 's/^[[:space:]]*k8s\.io\/client-go v0\.([0-9]+)\..*/\1/p' "$gomod" | head -n1)
    [[ -n $k8sminor ]] || die "cannot read the client-go version of $mod@$version"
    for p in pkg/lint/rules pkg/chartutil; do
      extra+=" -X $mod/$p.k8sVersionMajor=1 -X $mod/$p.k8sVersionMinor=$k8sminor"
    done
  fi
  go_install_to "helm$major" "$mod/cmd/helm@$version" \
    "-X $mod/internal/version.version=$version -X $mod/internal/version.gitTreeState=clean$extra"
  check_built "helm$major" "$t0"
}

build_act() {
  local t0; t0=$(date +%s)
  go_install_to act "github.com/nektos/act@$ACT_VERSION" "-X main.version=${ACT_VERSION#v}"
  check_built act "$t0"
}

build_registry() {
  local t0; t0=$(date +%s)
  go_install_to registry "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION" \
    "-X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION"
  check_built registry "$t0"
}

build_cosign() {
  local t0; t0=$(date +%s)
  go_install_to cosign "github.com/sigstore/cosign/v3/cmd/cosign@$COSIGN_VERSION" \
    "-X sigs.k8s.io/release-utils/version.gitVersion=$COSIGN_VERSION -X sigs.k8s.io/release-utils/version.gitTreeState=clean"
  check_built cosign "$t0"
}

build_syft() {
  local t0; t0=$(date +%s)
  go_install_to syft "github.com/anchore/syft/cmd/syft@$SYFT_VERSION" "-X main.version=${SYFT_VERSION#v}"
  check_built syft "$t0"
}

# Argo CD's go.mod replaces its gitops-engine with ./gitops-engine, a directory the
# module zip lacks, so `go install mod@ver` refuses it: build from a copy of the
# module's source with that replace dropped (the published gitops-engine at the
# same version is what it then uses).
build_argocd() {
  local t0 dir mod=github.com/argoproj/argo-cd/v3 v=$ARGOCD_VERSION src
  t0=$(date +%s)
  dir=$SRC/argo-cd-$v
  if [[ ! -f $dir/go.mod ]]; then
    src=$(cd "$TOOLS_DIR" && GOTOOLCHAIN=$ARGOCD_GO go mod download -json "$mod@$v" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])') || die "cannot download $mod@$v"
    rm -rf "$dir.tmp" && cp -r "$src" "$dir.tmp" && chmod -R u+w "$dir.tmp"
    (cd "$dir.tmp" && GOTOOLCHAIN=$ARGOCD_GO go mod edit -dropreplace github.com/argoproj/argo-cd/gitops-engine/v3)
    mv "$dir.tmp" "$dir"
  fi
  (cd "$dir" && GOTOOLCHAIN=$ARGOCD_GO go build -trimpath -o "$BIN/argocd" \
    -ldflags "-s -w -X $mod/common.version=${v#v} -X $mod/common.gitTreeState=clean" ./cmd)  # it prints "v" + version
  check_built argocd "$t0"
}

# Debian's redis-server, installed with apt-get when missing (as root: hack/as-root.sh), and
# linked into bin/ so that tests find it like the built tools. No service is started: the
# tests start their own on a loopback port.
install_redis() {
  local t0 server
  t0=$(date +%s)
  if ! server=$(command -v redis-server); then
    command -v apt-get >/dev/null || die "redis-server is missing; install Debian's redis-server package"
    bash "$(dirname "$0")/as-root.sh" env DEBIAN_FRONTEND=noninteractive \
      apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends redis-server >/dev/null ||
      { bash "$(dirname "$0")/as-root.sh" apt-get -o DPkg::Lock::Timeout=600 update -qq &&
        bash "$(dirname "$0")/as-root.sh" env DEBIAN_FRONTEND=noninteractive \
          apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends redis-server >/dev/null; } ||
      die "cannot install redis-server with apt-get"
    server=$(command -v redis-server) || die "redis-server is not on PATH after installing it"
  fi
  ln -sf "$server" "$BIN/redis-server"
  "$BIN/redis-server" --version | grep -q "Redis server" || die "$server does not run"
  log "redis-server" "Debian's, in $(($(date +%s) - t0))s  [$("$BIN/redis-server" --version)]"
}

# A wrapper module: go.etcd.io/etcd/server/v3 points its sibling modules at
# ../api etc. with replace lines, which `go install mod@ver` refuses; a module
# of our own that requires the released siblings builds the same main package.
build_etcd() {
  local t0 dir v=$ETCD_VERSION
  t0=$(date +%s)
  dir=$SRC/etcd-$v
  mkdir -p "$dir"
  if [[ ! -f $dir/go.mod ]]; then
    cat >"$dir/go.mod" <<EOF
module wavegen.local/tools/etcd

go 1.26.0

require (
	go.etcd.io/etcd/api/v3 $v
	go.etcd.io/etcd/client/pkg/v3 $v
	go.etcd.io/etcd/client/v3 $v
	go.etcd.io/etcd/pkg/v3 $v
	go.etcd.io/etcd/server/v3 $v
)
EOF
  fi
  (cd "$dir" && go build -trimpath -o "$BIN/etcd" \
    -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$v" go.etcd.io/etcd/server/v3)
  check_built etcd "$t0"
}

# A wrapper module for k8s.io/kubernetes: it requires its staging modules
# (k8s.io/api, k8s.io/client-go, ...) as v0.0.0 and replaces them with
# ./staging/src/...; we replace each with its published v0.<minor>.<patch>.
build_kubernetes() { # build_kubernetes NAME... (kubectl kube-apiserver kube-controller-manager)
  local t0 dir v=$KUBERNETES_VERSION gomod info stamp staging minor major pkgs=() name
  t0=$(date +%s)
  major=${v#v}; major=${major%%.*}
  minor=${v#v*.}; minor=${minor%%.*}
  staging="v0.${v#v*.}"
  dir=$SRC/kubernetes-$v
  mkdir -p "$dir"
  if [[ ! -f $dir/go.mod ]]; then
    gomod=$(module_info "k8s.io/kubernetes@$v" GoMod)
    {
      printf 'module wavegen.local/tools/kubernetes\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\n' "$v"
      printf 'replace (\n'
      sed -nE 's#^[[:space:]]*(k8s\.io/[A-Za-z0-9._-]+) => \./staging/src/.*#\1#p' "$gomod" |
        sort -u | while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$staging"; done
      printf ')\n'
    } >"$dir/go.mod.tmp"
    grep -q 'k8s.io/client-go =>' "$dir/go.mod.tmp" || die "no staging replace lines found in $gomod"
    mv "$dir/go.mod.tmp" "$dir/go.mod"
  fi
  info=$(module_info "k8s.io/kubernetes@$v" Time)
  stamp=$(date -u -d "$info" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || echo "$info")
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$v -X $p.gitMajor=$major -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=$stamp"
  done
  for name in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$name"); done
  # one go build for all three shares the compile work
  (cd "$dir" && go build -trimpath -ldflags "$ld" -o "$BIN/" "${pkgs[@]}")
  for name in "$@"; do check_built "$name" "$t0"; done
}

# ---- main -------------------------------------------------------------------
want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=("${ALL_TOOLS[@]}")
k8s_todo=()
for name in "${want[@]}"; do
  case $name in
    kustomize | helm3 | helm4 | kubectl | act | etcd | kube-apiserver | kube-controller-manager) ;;
    registry | cosign | syft | argocd) ;;
    redis-server) install_redis; continue ;;
    *) die "unknown tool '$name' (known: ${ALL_TOOLS[*]})" ;;
  esac
  if line=$(reports_pin "$name"); then
    log "$name" "$(pin_of "$name") ok (cached)  [$line]"
    continue
  fi
  case $name in
    kustomize) build_kustomize ;;
    helm3) build_helm 3 ;;
    helm4) build_helm 4 ;;
    act) build_act ;;
    etcd) build_etcd ;;
    registry) build_registry ;;
    cosign) build_cosign ;;
    syft) build_syft ;;
    argocd) build_argocd ;;
    kubectl | kube-apiserver | kube-controller-manager) k8s_todo+=("$name") ;;
  esac
done
if [[ ${#k8s_todo[@]} -gt 0 ]]; then
  build_kubernetes "${k8s_todo[@]}"
fi

cat >"$TOOLS_DIR/env.sh" <<EOF
# generated by wavegen hack/tools.sh
export WAVEGEN_TOOLS_DIR="$TOOLS_DIR"
export PATH="$BIN:\$PATH"
EOF
log "total" "$(($(date +%s) - START))s; tools in $BIN (. $TOOLS_DIR/env.sh)"
