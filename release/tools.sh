#!/usr/bin/env bash
# Installs what `make release` and the release tests need, once, cached outside the repository.
# Idempotent and quiet when everything is there.
#
#   release/tools.sh           # everything: `make release` and the release tests
#   release/tools.sh verify    # actionlint, ShellCheck and cargo-deny (`make verify`)
#   release/tools.sh cluster   # crane and the registry (tier 3's image registry, tests/cluster/nodes.sh)
#   release/tools.sh local     # what `release/build.sh --local` needs: crane, the registry, Zig,
#                              # cargo-zigbuild and this machine's Rust target (`make demo`)
#
# - Go tools, built from their Go modules at the versions pinned below (GOTOOLCHAIN=local):
#   crane (go-containerregistry) assembles and pushes the operator image, the Distribution registry
#   serves it on loopback in the image test, actionlint lints .github/workflows, Helm packages the
#   operator's chart and runs it in the chart tests, cosign signs the released images
#   (release/sign.sh; the image test signs and verifies with a throw-away key).
# - cargo-deny, built from its crate (`cargo install --locked`): `make verify`'s bans, licences and
#   sources, the release workflow's advisories.
# - Zig and cargo-zigbuild (Python packages, in a venv): the linker for the four cross targets.
# - The five Rust targets (`rustup target add`).
# - Debian packages: qemu-user (runs the linux/arm64 binary in tests), wine (runs the Windows one),
#   and ShellCheck (actionlint runs it on the scripts of the workflows).
#
# Prints the tool directories as shell assignments on its last lines (RELEASE_BIN=..., ZIG_VENV=...).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source-path=SCRIPTDIR
source "$HERE/versions.sh"
WHAT="${1:-all}"
case "$WHAT" in
  all | verify | cluster | local) ;;
  *) echo "tools.sh: unknown set $WHAT (all, verify, cluster, local)" >&2; exit 2 ;;
esac
# needed [SET...]: whether this run installs for one of the SETs (WHAT=all installs for every set;
# what `needed` alone guards is installed only then).
needed() { [[ $WHAT == all || " $* " == *" $WHAT "* ]]; }
log() { printf '==> %s\n' "$*" >&2; }

# --- Go tools --------------------------------------------------------------------------------
# shellcheck source-path=SCRIPTDIR
source "$HERE/go.sh"
# wrapped OUT MODULE VERSION PACKAGE: PACKAGE built into OUT, once.
wrapped() {
  [[ -x $1 ]] && return 0
  log "building $(basename "$1") ($2 $3)"
  mkdir -p "$(dirname "$1")"
  go_build "$1" "$2" "$3" "$4"
}
command -v go >/dev/null || { echo "error: Go is required (GOTOOLCHAIN=local)" >&2; exit 1; }
command -v jq >/dev/null || "$HERE/../tests/cluster/deps.sh"
apt_install() {
  log "installing Debian packages: $*"
  SUDO=(); [[ $(id -u) -eq 0 ]] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if needed verify; then
  wrapped "$RELEASE_BIN/actionlint" github.com/rhysd/actionlint "$ACTIONLINT_VERSION" github.com/rhysd/actionlint/cmd/actionlint
  # actionlint checks the workflows' `run:` scripts with shellcheck when it is on PATH.
  command -v shellcheck >/dev/null || apt_install shellcheck
  if [[ ! -x $CARGO_DENY ]]; then
    log "building cargo-deny $CARGO_DENY_VERSION"
    # In a throw-away target dir of its own (not CI's CARGO_TARGET_DIR).
    env -u CARGO_TARGET_DIR cargo install --quiet --locked cargo-deny --version "$CARGO_DENY_VERSION" \
      --root "${CARGO_DENY%/bin/cargo-deny}" >&2
  fi
fi
if needed cluster local; then
  wrapped "$RELEASE_BIN/crane" github.com/google/go-containerregistry "$CRANE_VERSION" github.com/google/go-containerregistry/cmd/crane
  wrapped "$RELEASE_BIN/registry" github.com/distribution/distribution/v3 "$DISTRIBUTION_VERSION" github.com/distribution/distribution/v3/cmd/registry
fi
if needed; then
  wrapped "$RELEASE_BIN/helm" helm.sh/helm/v4 "$HELM_VERSION" helm.sh/helm/v4/cmd/helm
  wrapped "$COSIGN" github.com/sigstore/cosign/v2 "$COSIGN_VERSION" github.com/sigstore/cosign/v2/cmd/cosign
fi

# --- Zig + cargo-zigbuild, Rust targets --------------------------------------------------------
if needed local; then
  if [[ ! -x $ZIG_VENV/bin/cargo-zigbuild ]] || ! "$ZIG_VENV/bin/python" -m ziglang version >/dev/null 2>&1; then
    log "installing ziglang $ZIG_VERSION and cargo-zigbuild $CARGO_ZIGBUILD_VERSION into $ZIG_VENV"
    rm -rf "$ZIG_VENV"
    python3 -m venv "$ZIG_VENV"
    "$ZIG_VENV/bin/pip" install --quiet --disable-pip-version-check \
      "ziglang==$ZIG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
  fi
  targets="$RUST_TARGETS"
  [[ $WHAT == all ]] || targets="$(triple "linux_$(host_arch)")"
  installed="$(rustup target list --installed)"
  missing=()
  for t in $targets; do grep -qx "$t" <<<"$installed" || missing+=("$t"); done
  if ((${#missing[@]})); then
    log "rustup target add ${missing[*]}"
    rustup target add "${missing[@]}" >&2
  fi
fi

# --- Debian packages: the release tests run the arm64 and Windows binaries -----------------------
if needed; then
  need=()
  command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
  command -v wine >/dev/null || need+=(wine)
  ((${#need[@]} == 0)) || apt_install "${need[@]}"
fi
echo "RELEASE_BIN=$RELEASE_BIN"
echo "ZIG_VENV=$ZIG_VENV"
