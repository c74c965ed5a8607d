#!/usr/bin/env bash
# Builds the Krew release archives of kubectl-infera and the filled-in Krew manifest.
#
#   krew/package.sh [--out DIR] [--version V] [--platforms "linux_amd64 darwin_arm64 ..."]
#                   [--bin PLATFORM=PATH]... [--allow-missing]
#
# For each platform (default: all five of krew/infera.yaml) it takes the binary given with --bin,
# or builds it with `cargo build --release --locked --target <triple>` (the Rust target must be
# installed). Each archive is DIR/kubectl-infera_<version>_<platform>.tar.gz holding the binary and
# LICENSE (Krew's index rejects plugins without one), made reproducibly (sorted, owner 0, mtime 0).
# DIR/infera.yaml is the manifest with every sha256 filled in. With --allow-missing, platforms that
# cannot be built are dropped from the manifest instead of failing (for local tests).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/target/krew"
VERSION=""
PLATFORMS="linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64"
ALLOW_MISSING=0
declare -A BIN=()
while (($#)); do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    --version) VERSION="$2"; shift 2 ;;
    --platforms) PLATFORMS="$2"; shift 2 ;;
    --bin) BIN["${2%%=*}"]="${2#*=}"; shift 2 ;;
    --allow-missing) ALLOW_MISSING=1; shift ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z $VERSION ]]; then
  VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/Cargo.toml" | head -n1)"
fi
[[ -n $VERSION ]] || { echo "package.sh: cannot read the workspace version; pass --version" >&2; exit 1; }
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

triple() {
  case "$1" in
    linux_amd64) echo x86_64-unknown-linux-gnu ;;
    linux_arm64) echo aarch64-unknown-linux-gnu ;;
    darwin_amd64) echo x86_64-apple-darwin ;;
    darwin_arm64) echo aarch64-apple-darwin ;;
    windows_amd64) echo x86_64-pc-windows-gnu ;;
    *) echo "package.sh: unknown platform $1" >&2; return 1 ;;
  esac
}

declare -A SHA=()
for platform in $PLATFORMS; do
  exe=kubectl-infera
  [[ $platform == windows_* ]] && exe=kubectl-infera.exe
  bin="${BIN[$platform]:-}"
  if [[ -z $bin ]]; then
    t="$(triple "$platform")"
    if cargo build --release --locked -p kubectl-infera --target "$t" >&2; then
      bin="$ROOT/target/$t/release/$exe"
    elif ((ALLOW_MISSING)); then
      echo "package.sh: cannot build $platform ($t); leaving it out of the manifest" >&2
      continue
    else
      echo "package.sh: cannot build $platform ($t): install the target or pass --bin $platform=PATH" >&2
      exit 1
    fi
  fi
  [[ -f $bin ]] || { echo "package.sh: $bin does not exist" >&2; exit 1; }
  stage="$(mktemp -d)"
  install -m 0755 "$bin" "$stage/$exe"
  install -m 0644 "$ROOT/LICENSE" "$stage/LICENSE"
  archive="$OUT/kubectl-infera_${VERSION}_${platform}.tar.gz"
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$exe" LICENSE | gzip -n >"$archive"
  rm -rf "$stage"
  SHA[$platform]="$(sha256sum "$archive" | cut -d' ' -f1)"
  echo "$archive ${SHA[$platform]}" >&2
done
((${#SHA[@]})) || { echo "package.sh: no platform was packaged" >&2; exit 1; }

# Fill the template: keep only packaged platforms.
shas=""
for p in "${!SHA[@]}"; do shas+="$p=${SHA[$p]} "; done
python3 - "$ROOT/krew/infera.yaml" "$OUT/infera.yaml" "$VERSION" $shas <<'PY'
import re, sys
src, dst, version, *pairs = sys.argv[1:]
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
open(dst, "w").write(out.replace("{{VERSION}}", version))
PY
echo "$OUT/infera.yaml"
