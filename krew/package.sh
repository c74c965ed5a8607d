#!/usr/bin/env bash
# Packs the Krew release archives of kubectl-infera and fills in the Krew manifest (release/build.sh
# builds the binaries first; `make release` runs both).
#
#   krew/package.sh [--out DIR] [--version V] [--platforms "linux_amd64 darwin_arm64 ..."]
#                   [--bin PLATFORM=PATH]... [--base-uri URI]
#
# For each platform (default: all five of krew/infera.yaml) it takes the binary given with --bin,
# or the one release/build.sh left (release_binary in release/versions.sh). Each archive is
# DIR/kubectl-infera_<version>_<platform>.tar.gz holding the binary, LICENSE (Krew's index
# rejects plugins without one), and the third-party notices and CycloneDX SBOM of the crates linked
# into that platform's binary (release/notices.py), reproducibly: sorted, owner 0:0, mode
# 0755/0644, mtime 0, gzip -n.
# DIR/infera.yaml is the manifest with every sha256 filled in and only the platforms packaged; its
# URIs point at the GitHub release of the version, or at --base-uri (e.g. http://127.0.0.1:PORT for
# a local index).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/target/krew"
VERSION=""
BASE_URI=""
PLATFORMS=""
declare -A BIN=()
while (($#)); do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --version) VERSION="$2"; shift 2 ;;
    --platforms) PLATFORMS="$2"; shift 2 ;;
    --bin) BIN["${2%%=*}"]="${2#*=}"; shift 2 ;;
    --base-uri) BASE_URI="${2%/}"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z $VERSION ]]; then
  VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n1)"
fi
[[ -n $VERSION ]] || { echo "package.sh: cannot read the workspace version; pass --version" >&2; exit 1; }
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# shellcheck source=release/versions.sh
source "$ROOT/release/versions.sh"
PLATFORMS="${PLATFORMS:-$KREW_PLATFORMS}"

declare -A SHA=()
for platform in $PLATFORMS; do
  exe=kubectl-infera
  [[ $platform == windows_* ]] && exe=kubectl-infera.exe
  bin="${BIN[$platform]:-}"
  [[ -n $bin ]] || bin="$(release_binary "$platform" "$exe")"
  [[ -f $bin ]] || { echo "package.sh: $bin does not exist: run release/build.sh or pass --bin $platform=PATH" >&2; exit 1; }
  stage="$(mktemp -d)"
  install -m 0755 "$bin" "$stage/$exe"
  install -m 0644 "$ROOT/LICENSE" "$stage/LICENSE"
  (cd "$ROOT" && release/notices.py --package kubectl-infera --target "$(triple "$platform")" --out "$stage")
  chmod 0644 "$stage/THIRD-PARTY-NOTICES.txt" "$stage/sbom.cdx.json"
  archive="$OUT/kubectl-infera_${VERSION}_${platform}.tar.gz"
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - \
    "$exe" LICENSE THIRD-PARTY-NOTICES.txt sbom.cdx.json | gzip -n >"$archive"
  rm -rf "$stage"
  SHA[$platform]="$(sha256sum "$archive" | cut -d' ' -f1)"
  echo "$archive ${SHA[$platform]}" >&2
done
((${#SHA[@]})) || { echo "package.sh: no platform was packaged" >&2; exit 1; }

# Fill the template: keep only the packaged platforms, in the template's order.
shas=()
for p in "${!SHA[@]}"; do shas+=("$p=${SHA[$p]}"); done
python3 - "$ROOT/krew/infera.yaml" "$OUT/infera.yaml" "$VERSION" "$BASE_URI" "${shas[@]}" <<'PY'
import re, sys
src, dst, version, base_uri, *pairs = sys.argv[1:]
sha = dict(p.split("=", 1) for p in pairs)
text = open(src).read()
head, _, rest = text.partition("  platforms:\n")
blocks = re.split(r"(?m)^(?=    - selector:)", rest)
kept = []
for block in blocks:
    m = re.search(r"\{\{SHA256_(\w+)\}\}", block)
    if not m:
        continue
    if m.group(1) in sha:
        kept.append(block.replace(m.group(0), sha[m.group(1)]))
out = head + "  platforms:\n" + "".join(kept)
out = "\n".join(l for l in out.split("\n") if not l.startswith("# ")).lstrip("\n")
if base_uri:
    out = re.sub(r"(?m)^(      uri: ).*/([^/]+)$", lambda m: m.group(1) + base_uri + "/" + m.group(2), out)
open(dst, "w").write(out.replace("{{VERSION}}", version))
PY
echo "$OUT/infera.yaml"
