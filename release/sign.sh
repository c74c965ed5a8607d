#!/usr/bin/env bash
# Signs pushed images with cosign (github.com/sigstore/cosign/v2, built by release/tools.sh), each
# by its digest: the index and, recursively, the image of each platform in it, so that a policy
# that resolves a platform's manifest finds a signature too.
#
#   COSIGN_KEY=KEY [COSIGN_PASSWORD=...] release/sign.sh [--COSIGN-SIGN-FLAG=VALUE...] REPOSITORY@sha256:HEX...
#
# KEY is cosign's `--key`: a key file of `cosign generate-key-pair`, env://VARIABLE holding one, or
# a KMS URI; cosign reads the key's password from COSIGN_PASSWORD. The signature goes to the image's
# repository (cosign's `sha256-<hex>.sig` tag) and, unless a flag says `--tlog-upload=false`, to the
# Rekor transparency log, so that `cosign verify --key cosign.pub REPOSITORY@sha256:HEX` verifies
# with no other flag. The release workflow runs it after pushing the images when the repository
# has a key; the image test (tests/tests/isolated/release_image.rs) signs with a throw-away key on
# a loopback registry and verifies.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source-path=SCRIPTDIR
source "$HERE/versions.sh"
usage() { echo "usage: COSIGN_KEY=KEY release/sign.sh [--COSIGN-SIGN-FLAG=VALUE...] REPOSITORY@sha256:HEX..." >&2; exit 2; }
[[ -n ${COSIGN_KEY:-} ]] || { echo "sign.sh: COSIGN_KEY is not set: name the signing key (a file, env://VARIABLE or a KMS URI)" >&2; usage; }
flags=() references=()
for arg; do
  case "$arg" in
    -*) flags+=("$arg") ;;
    *@sha256:*) references+=("$arg") ;;
    *) echo "sign.sh: $arg is not pinned by digest (REPOSITORY@sha256:HEX: a tag can move after it is signed), nor a flag (--flag=value)" >&2; exit 2 ;;
  esac
done
((${#references[@]})) || usage
[[ -x $COSIGN ]] || { echo "sign.sh: $COSIGN not found: run release/tools.sh" >&2; exit 1; }
for reference in "${references[@]}"; do
  "$COSIGN" sign --yes --recursive --key "$COSIGN_KEY" "${flags[@]}" "$reference"
done
