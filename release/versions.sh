# shellcheck shell=bash disable=SC2034  # sourced: the variables are used by the scripts
# Pinned versions of the release tools, and the Krew platforms (sourced by release/*.sh and
# krew/package.sh). Changing a Go tool's version changes its cache directory, so a stale build is
# never reused.
CRANE_VERSION=v0.22.1          # github.com/google/go-containerregistry
DISTRIBUTION_VERSION=v3.1.2    # github.com/distribution/distribution/v3 (the registry)
ACTIONLINT_VERSION=v1.7.12     # github.com/rhysd/actionlint
HELM_VERSION=v4.3.2            # helm.sh/helm/v4 (packages and pushes the chart; the chart tests)
ZIG_VERSION=0.17.0             # Python package ziglang
CARGO_ZIGBUILD_VERSION=0.24.0  # Python package cargo-zigbuild
COSIGN_VERSION=v2.6.5          # github.com/sigstore/cosign/v2 (signs the released images: release/sign.sh)
CARGO_DENY_VERSION=0.20.2      # crate cargo-deny (`make verify`: bans, licences, sources; advisories on a tag)
# The images the binaries name by default, each built here and pinned in them by the digest of
# what was built (tag for people, digest for the kubelet): `init` installs the operator by its
# digest (kubectl-infera/src/bundle.rs), the operator runs a managed NATS by its digest
# (infera-core's NATS_IMAGE). Nothing else is named by default: the engines, the EPP and the model
# download run the deployment's own `spec.image`.
OPERATOR_IMAGE_REPO=ghcr.io/amd/infera/operator
NATS_IMAGE_REPO=ghcr.io/amd/infera/nats
NATS_SERVER_VERSION=v2.15.3    # github.com/nats-io/nats-server/v2, the server in NATS_IMAGE_REPO
# The five Krew platforms and the Rust target each is built for (Linux static, with musl).
KREW_PLATFORMS="linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64"
triple() {
  case "$1" in
    linux_amd64) echo x86_64-unknown-linux-musl ;;
    linux_arm64) echo aarch64-unknown-linux-musl ;;
    darwin_amd64) echo x86_64-apple-darwin ;;
    darwin_arm64) echo aarch64-apple-darwin ;;
    windows_amd64) echo x86_64-pc-windows-gnu ;;
    *) echo "unknown platform $1 (known: $KREW_PLATFORMS)" >&2; return 1 ;;
  esac
}
# This machine's Linux arch as the image and Krew platforms name it (release/build.sh --local).
host_arch() {
  case "$(uname -m)" in
    x86_64) echo amd64 ;;
    aarch64) echo arm64 ;;
    *) echo "no release platform for $(uname -m)" >&2; return 1 ;;
  esac
}
RUST_TARGETS="$(for p in $KREW_PLATFORMS; do triple "$p"; done | xargs)"
RELEASE_CACHE="${RELEASE_CACHE:-$HOME/.cache/infera-release}"
RELEASE_BIN="$RELEASE_CACHE/bin-crane-$CRANE_VERSION-registry-$DISTRIBUTION_VERSION-actionlint-$ACTIONLINT_VERSION-helm-$HELM_VERSION"
COSIGN="$RELEASE_CACHE/cosign-$COSIGN_VERSION/cosign"
CARGO_DENY="$RELEASE_CACHE/cargo-deny-$CARGO_DENY_VERSION/bin/cargo-deny"
ZIG_VENV="$RELEASE_CACHE/venv-zig-$ZIG_VERSION-zigbuild-$CARGO_ZIGBUILD_VERSION"
# The release builds' own cargo target dirs, one per Rust target (release/build.sh builds two
# targets at a time): under ~/.cache so a warm CI run reuses them.
RELEASE_TARGET_DIR="${RELEASE_TARGET_DIR:-$RELEASE_CACHE/targets}"
# Where release/build.sh leaves EXE (kubectl-infera, kubectl-infera.exe, infera-operator) for PLATFORM.
release_binary() { echo "$RELEASE_TARGET_DIR/$(triple "$1")/$(triple "$1")/release/$2"; }
