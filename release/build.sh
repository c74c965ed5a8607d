#!/usr/bin/env bash
# `make release`: the five Krew archives of kubectl-infera, the filled-in Krew manifest and the
# multi-arch operator and NATS images, reproducibly (same bytes twice), from this machine alone.
#
#   release/build.sh [--version V] [--image-repo REPO] [--rebuild] [--local]
#
# 1. release/tools.sh: Go tools (crane, registry, actionlint), Zig + cargo-zigbuild, Rust targets.
# 2. nats-server for linux amd64 + arm64 (Go, static) -> target/nats-image/ (OCI layout, one index,
#    with the licence files of its modules under /licenses/): the operator's default NATS image.
# 3. infera-operator for linux amd64 + arm64 (static, musl) -> target/image/, with the NATS image
#    pinned by digest (INFERA_NATS_IMAGE=REPO:TAG@sha256:..., read by infera-core's NATS_IMAGE) and
#    the third-party notices and CycloneDX SBOM of its crates under /licenses/ (release/notices.py);
#    the SBOM also attached to the image index as an OCI referrer -> target/image-sbom/.
# 4. kubectl-infera for the five Krew platforms, with both images pinned by digest
#    (INFERA_OPERATOR_IMAGE=REPO@sha256:..., read by kubectl-infera/src/bundle.rs).
# 5. krew/package.sh -> target/krew/kubectl-infera_<V>_<platform>.tar.gz (the binary, LICENSE, its
#    crates' notices and SBOM) + infera.yaml, and
#    target/krew/operator-image.txt (the pinned reference) and bundle.yaml (what `init` applies).
# 6. The GitOps installs from the same bundle: target/install/infera-operator-<V>.tgz (the Helm
#    chart, `helm package`) and infera-operator-<V>.yaml (the single-file manifest).
#
# Cargo builds go to $RELEASE_TARGET_DIR/<triple> (~/.cache/infera-release/targets), so a warm CI
# run reuses them; the outputs of a build are kept by the hash of its inputs and reused when the same inputs
# come again (--rebuild builds anyway, e.g. to check that a rebuild gives the same bytes).
# --local builds for this machine only (`make demo`): its platform's Krew archive and the NATS and
# operator images for its arch alone (indexes of one manifest: other digests than the release's,
# which the binaries then pin), no Helm chart.
# Environment: RELEASE_PLATFORMS (default all five; the operator is built for both linux arches
# unless --local).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck source-path=SCRIPTDIR
source release/versions.sh
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)"
IMAGE_REPO="${IMAGE_REPO:-$OPERATOR_IMAGE_REPO}"
REBUILD=
LOCAL=
while (($#)); do
  case "$1" in
    --version) VERSION="$2"; shift 2 ;;
    --image-repo) IMAGE_REPO="$2"; shift 2 ;;
    --rebuild) REBUILD=1; shift ;;
    --local) LOCAL=1; shift ;;
    -h | --help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -n $LOCAL ]]; then
  ARCHES="$(host_arch)"
  PLATFORMS="linux_$ARCHES"
else
  ARCHES="amd64 arm64"
  PLATFORMS="${RELEASE_PLATFORMS:-$KREW_PLATFORMS}"
fi
log() { printf '==> %s\n' "$*" >&2; }
T0=$SECONDS

release/tools.sh "${LOCAL:+local}" >/dev/null

# The outputs depend only on the tracked sources below, the toolchain and the arguments: when a
# release of exactly these inputs was built before on this machine, its outputs are reused (as a
# build cache would), so a CI run on an unchanged tree does not spend ten minutes relinking.
inputs=(Cargo.toml Cargo.lock LICENSE deny.toml crds deploy infera-core infera-operator kubectl-infera krew release)
key="$({
  git ls-files -z --cached --others --exclude-standard -- "${inputs[@]}" | sort -z | xargs -0 sha256sum
  rustc -vV
  echo "$VERSION $IMAGE_REPO $PLATFORMS $ARCHES ${LOCAL:+local}"
  go version
} | sha256sum | cut -c1-16)"
OUTPUTS="$RELEASE_CACHE/outputs"
if [[ -z $REBUILD && -f "$OUTPUTS/$key/krew/infera.yaml" && -f "$OUTPUTS/$key/nats-image/index.json" &&
  -f "$OUTPUTS/$key/image-sbom/index.json" ]]; then
  rm -rf target/krew target/image target/image-sbom target/nats-image target/install
  mkdir -p target
  cp -a "$OUTPUTS/$key/krew" "$OUTPUTS/$key/image" "$OUTPUTS/$key/image-sbom" "$OUTPUTS/$key/nats-image" target/
  [[ ! -d "$OUTPUTS/$key/install" ]] || cp -a "$OUTPUTS/$key/install" target/
  log "release $VERSION: inputs unchanged since the build $key, outputs reused: target/krew/, target/image/ ($(cat target/krew/operator-image.txt)), target/nats-image/"
  exit 0
fi

# The NATS image first: the operator and the plugin name it by its digest. nats-server is built
# per arch into the release's own cache (Go's build cache makes a rebuild quick).
# shellcheck source-path=SCRIPTDIR
source release/go.sh
nats_build="$RELEASE_CACHE/nats-server-$NATS_SERVER_VERSION"
mkdir -p "$nats_build"
log "nats-server $NATS_SERVER_VERSION for linux $ARCHES"
images=()
for a in $ARCHES; do
  GOARCH=$a go_build "$nats_build/nats-server-$a" github.com/nats-io/nats-server/v2 "$NATS_SERVER_VERSION" \
    github.com/nats-io/nats-server/v2
  images+=("$a=$nats_build/nats-server-$a")
done
go_notices "$nats_build/nats-server-${ARCHES%% *}" "$nats_build/licenses"
digest="$(python3 release/image.py --out target/nats-image --version "${NATS_SERVER_VERSION#v}" \
  --binary nats-server --source https://github.com/nats-io/nats-server --notices "$nats_build/licenses" \
  "${images[@]}")"
export INFERA_NATS_IMAGE="$NATS_IMAGE_REPO:${NATS_SERVER_VERSION#v}@$digest"
echo "$INFERA_NATS_IMAGE" >target/nats-image/reference.txt

# The layout before per-target directories (one shared target dir): 2.7 GB nothing reads now.
[[ $RELEASE_TARGET_DIR == "$RELEASE_CACHE/target" ]] || rm -rf "$RELEASE_CACHE/target"
export PATH="$ZIG_VENV/bin:$PATH"
# Reproducible across machines too: no absolute path of this machine in the binaries. Workspace
# crates are compiled with relative paths already; dependencies come from CARGO_HOME, generated
# code from the target dir, std from /rustc/<commit>. (Stable per machine, so the cache stays warm.)
CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTFLAGS="--remap-path-prefix=$CARGO_HOME=/cargo --remap-path-prefix=$RELEASE_TARGET_DIR=/target"
export SOURCE_DATE_EPOCH=0

# cargo-zigbuild links with `zig cc`; macOS frameworks (Security, CoreFoundation: rustls'
# platform verifier) are not part of Zig, so link against text stubs (release/macos-stubs.py).
if [[ " $PLATFORMS " == *" darwin_"* ]]; then
  export SDKROOT="$RELEASE_TARGET_DIR/macos-sdk"
  python3 release/macos-stubs.py "$SDKROOT"
fi

# One cargo invocation per target, each in a target dir of its own, two at a time: cargo locks its
# target dir for the whole of a build, and much of a build runs on one core (rustc's front end, the
# plugin's single codegen unit, the links), so the other core serves the other target. With
# several `--target`s in one invocation, cargo unifies the features of a
# dependency across them (tokio gains `windows-sys` on Linux when windows_amd64 is built in the same
# run), which changes the crates' metadata hashes and so the binary's layout. Built alone, each
# binary is the same bytes whichever other platforms the run builds.
# The plugin in one codegen unit where the toolchain still strips the result (ELF, PE): its
# modules then inline into each other as one file's would, and linux_amd64, the tightest against
# the 15 MiB budget, is 15.05 MB instead of 15.75. Not for Apple targets: there a per-package
# profile leaves the Mach-O unstripped (19.5 MB for darwin_amd64, measured), and their default
# builds are within the budget (14.97 MB).
build() {
  local one_unit=() log="$RELEASE_TARGET_DIR/$2-$1.log"
  [[ $1 == kubectl-infera && $2 != *-apple-* ]] && one_unit=(--config 'profile.release.package.kubectl-infera.codegen-units=1')
  mkdir -p "$RELEASE_TARGET_DIR"
  CARGO_TARGET_DIR="$RELEASE_TARGET_DIR/$2" cargo zigbuild --release --locked -p "$1" --target "$2" \
    "${one_unit[@]}" >"$log" 2>&1 || { cat "$log" >&2; echo "build.sh: $1 for $2 failed" >&2; return 1; }
}
# build PACKAGE for each PLATFORM, two at a time.
build_all() {
  local package=$1 platform pids=() failed=0
  shift
  for platform; do
    if ((${#pids[@]} == 2)); then
      wait "${pids[0]}" || failed=1
      pids=("${pids[@]:1}")
    fi
    build "$package" "$(triple "$platform")" &
    pids+=("$!")
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  return "$failed"
}

# The operator's static build allocates with jemalloc (infera-operator/src/main.rs), whose
# allocator page size is fixed when it is built: 64 KiB on arm64, so the binary also runs on
# kernels with 16 or 64 KiB pages (JEMALLOC_SYS_WITH_LG_PAGE, tikv-jemalloc-sys 0.6 README.md).
export AARCH64_UNKNOWN_LINUX_MUSL_JEMALLOC_SYS_WITH_LG_PAGE=16
# Its options are compiled in (`--with-malloc-conf`; `_RJEM_MALLOC_CONF` still overrides them):
# one arena instead of four per core, and freed pages given back after 1 s instead of 10 s.
# Converging 1,000 deployments, the operator's peak RSS was 41.0-41.1 MiB with jemalloc's
# defaults, 40.2 with the decay alone and 39.2 with both (docs/performance.md); a reconcile
# allocates little and briefly, so one arena costs no measurable time on two cores.
export JEMALLOC_SYS_WITH_MALLOC_CONF=narenas:1,dirty_decay_ms:1000
operator() { release_binary "linux_$1" infera-operator; }
log "infera-operator for linux $ARCHES"
# shellcheck disable=SC2046  # one platform per word
build_all infera-operator $(for a in $ARCHES; do echo "linux_$a"; done)
log "operator image (OCI layout in target/image; NATS $INFERA_NATS_IMAGE)"
images=() triples=()
for a in $ARCHES; do
  images+=("$a=$(operator "$a")")
  triples+=(--target "$(triple "linux_$a")")
done
# Under /licenses/: the notices and the SBOM of the crates linked into the binaries.
notices="$RELEASE_TARGET_DIR/operator-notices"
rm -rf "$notices"
release/notices.py --package infera-operator "${triples[@]}" --out "$notices"
digest="$(python3 release/image.py --out target/image --version "$VERSION" --notices "$notices" \
  --sbom "$notices/sbom.cdx.json" --sbom-out target/image-sbom "${images[@]}")"
export INFERA_OPERATOR_IMAGE="$IMAGE_REPO@$digest"

log "kubectl-infera for $PLATFORMS (operator image $INFERA_OPERATOR_IMAGE)"
# shellcheck disable=SC2086  # one platform per word
build_all kubectl-infera $PLATFORMS

log "Krew archives and manifest (target/krew)"
rm -rf target/krew
krew/package.sh --out target/krew --version "$VERSION" --platforms "$PLATFORMS" >/dev/null
echo "$INFERA_OPERATOR_IMAGE" >target/krew/operator-image.txt
host="$(release_binary linux_amd64 kubectl-infera)"
rm -rf target/install
if [[ " $PLATFORMS " == *" linux_amd64 "* && $(uname -m) == x86_64 ]]; then
  "$host" init --dry-run=client -o yaml >target/krew/bundle.yaml
fi
if [[ -z $LOCAL && -f target/krew/bundle.yaml ]]; then
  # The GitOps installs, from the same bundle with the image pinned by digest: the Helm chart
  # (deploy/helm/infera-operator as this binary generates it) and the single-file manifest.
  log "Helm chart and manifest (target/install)"
  mkdir -p target/install
  generated="$(mktemp -d)"
  "$host" __generate "$generated" 2>/dev/null
  "$RELEASE_BIN/helm" package "$generated/deploy/helm/infera-operator" --destination target/install >/dev/null
  rm -rf "$generated"
  cp target/krew/bundle.yaml "target/install/infera-operator-$VERSION.yaml"
fi

log "sizes (stripped)"
for p in $PLATFORMS; do
  exe=kubectl-infera; [[ $p == windows_* ]] && exe=kubectl-infera.exe
  printf '  kubectl-infera %-14s %s bytes\n' "$p" "$(stat -c %s "$(release_binary "$p" "$exe")")" >&2
done
for a in $ARCHES; do
  printf '  infera-operator linux_%-7s %s bytes\n' "$a" "$(stat -c %s "$(operator "$a")")" >&2
done
# Keep this build's outputs for the next run with the same inputs, and the two newest others.
mkdir -p "$OUTPUTS/$key.tmp"
cp -a target/krew target/image target/image-sbom target/nats-image "$OUTPUTS/$key.tmp/"
[[ ! -d target/install ]] || cp -a target/install "$OUTPUTS/$key.tmp/"
rm -rf "${OUTPUTS:?}/$key" && mv "$OUTPUTS/$key.tmp" "$OUTPUTS/$key"
find "$OUTPUTS" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' | sort -rn | tail -n +4 | cut -d" " -f2- | xargs -r rm -rf
log "release $VERSION built in $((SECONDS - T0))s: target/krew/, target/image/ ($INFERA_OPERATOR_IMAGE), target/nats-image/ ($INFERA_NATS_IMAGE)"
