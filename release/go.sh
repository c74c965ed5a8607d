# shellcheck shell=bash
# Go builds of the release (sourced by release/tools.sh and release/build.sh): a Go program built
# from its module at a pinned version, and the licence notices of what it was built from.
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false"

# go_build OUT MODULE VERSION PACKAGE: builds PACKAGE into OUT (static; for $GOARCH when set) from a
# throw-away main module that requires MODULE@VERSION with MODULE's own go line: it resolves exactly
# the versions MODULE's go.mod pins and never reads the proxy's version list (tests/cluster/build.sh
# builds the control plane the same way). -trimpath and no build id: the same bytes on every machine
# with the same Go.
go_build() {
  local out=$1 mod=$2 ver=$3 pkg=$4 work gomod
  work="$(mktemp -d)"
  gomod="$(cd "$work" && go mod download -json "$mod@$ver" | jq -r .GoMod)"
  (
    cd "$work" || exit 1
    printf 'module local.test/%s-bin\n\n%s\n\nrequire %s %s\n' "$(basename "$out")" \
      "$(awk '$1=="go"{print; exit}' "$gomod")" "$mod" "$ver" >go.mod
    go build -trimpath -ldflags "-s -w -buildid=" -o "$out.tmp" "$pkg"
  )
  chmod -R u+w "$work"; rm -rf "$work"
  mv "$out.tmp" "$out"
}

# go_notices BINARY DIR: the licence files (LICENSE*, LICENCE*, COPYING*, NOTICE*) of every module
# BINARY was built from, as `go version -m` lists them (its main module and each dependency), into
# DIR/<module path>/, and Go's own (its runtime and standard library are in every Go binary) into
# DIR/go/; fails naming a module that has none (its code could not be redistributed without one).
go_notices() {
  local binary=$1 dir=$2 mod ver src found
  rm -rf "$dir"
  mkdir -p "$dir/go"
  cp "$(go env GOROOT)/LICENSE" "$dir/go/"
  while read -r mod ver; do
    src="$(cd /tmp && go mod download -json "$mod@$ver" | jq -r .Dir)"
    mkdir -p "$dir/$mod"
    found=0
    for f in "$src"/LICENSE* "$src"/LICENCE* "$src"/COPYING* "$src"/NOTICE*; do
      [[ -f $f ]] || continue
      cp "$f" "$dir/$mod/"
      found=1
    done
    ((found)) || { echo "go_notices: no licence file in $mod $ver ($src)" >&2; return 1; }
  done < <(go version -m "$binary" | awk '$1 == "mod" || $1 == "dep" {print $2, $3}')
  chmod -R u+w,go-w "$dir"
}
