# Entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
CARGO ?= cargo
export GOTOOLCHAIN := local

.PHONY: test unit release e2e bench verify lint-workflows generate cluster-build cluster-up cluster-down demo fmt

## Everything: unit tests, the release (five platforms + operator image), then the end-to-end suite
## on a tier-2 local cluster it brings up and down (it includes the release tests: formats, qemu,
## Wine, the Krew index flow, the image pushed to a loopback registry).
test: unit release e2e

## Unit, snapshot and property tests (no cluster).
unit:
	$(CARGO) test --workspace --exclude infera-e2e --locked

## The five Krew archives and the filled-in manifest (target/krew/), the multi-arch operator image as
## an OCI layout (target/image/), reproducibly; see release/build.sh. Tools cached under ~/.cache.
release:
	release/build.sh

## End-to-end suite on the local control plane (builds it on first use, cached under ~/.cache).
e2e:
	tests/run-e2e.sh

## The benchmarks, each failing when it misses a goal of its page (docs/performance.md, rollouts.md,
## planner.md), on a tier-2 cluster of their own; INFERA_BENCH_SIZES=1000,5000 for the fleet at both sizes.
## Not part of `make test` (tens of minutes). See tests/bench.sh.
bench:
	tests/bench.sh

## Fail on stale or new uncommitted generated files, unformatted code, a clippy warning, a dependency leaking into the pure crate,
## or one that deny.toml refuses (a banned crate, a second version, a licence, a source: cargo-deny, and release/notices.py per binary).
## (infera-core is checked on its own: in the workspace, feature unification could hide a leak.)
verify: generate lint-workflows
	@stale="$$(git status --porcelain -- crds completions deploy/helm)"; [[ -z $$stale ]] || { echo "$$stale" >&2; echo "generated files are stale or new: run 'make generate' and commit" >&2; exit 1; }
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	$(CARGO) check -p infera-core --locked
	source release/versions.sh && for p in $$KREW_PLATFORMS; do release/notices.py --package kubectl-infera --target "$$(triple $$p)" || exit 1; done
	source release/versions.sh && release/notices.py --package infera-operator --target "$$(triple linux_amd64)" --target "$$(triple linux_arm64)"
	source release/versions.sh && targets="$$(python3 -c 'import tomllib; print(*tomllib.load(open("deny.toml", "rb"))["graph"]["targets"])')" && \
	  [[ $$targets == "$$RUST_TARGETS" ]] || { echo "deny.toml's graph.targets ($$targets) are not release/versions.sh's RUST_TARGETS ($$RUST_TARGETS)" >&2; exit 1; }
	source release/versions.sh && "$$CARGO_DENY" --locked check bans licenses sources

## actionlint (built from its Go module, cached) on .github/workflows: they cannot run here. (The tools
## of `make verify`, cargo-deny too, are installed here: release/tools.sh verify.)
lint-workflows:
	release/tools.sh verify >/dev/null
	source release/versions.sh && "$$RELEASE_BIN/actionlint" -no-color

## Regenerate crds/, completions/ and the Helm chart (deploy/helm/).
generate:
	$(CARGO) run --quiet --locked -p infera-core --example crd > crds/.crd.yaml.tmp
	@cmp -s crds/.crd.yaml.tmp crds/inferadeployments.infera.amd.com.yaml && rm crds/.crd.yaml.tmp || { mv crds/.crd.yaml.tmp crds/inferadeployments.infera.amd.com.yaml; echo "wrote crds/inferadeployments.infera.amd.com.yaml"; }
	$(CARGO) run --quiet --locked -p kubectl-infera -- __generate .

cluster-build:
	tests/cluster/build.sh

## Local tier-2 control plane (TIER=1 for etcd + kube-apiserver only, TIER=3 for real nodes, as root). Ends with `export KUBECONFIG=...`.
cluster-up:
	tests/cluster/up.sh --tier $${TIER:-2}

cluster-down:
	tests/cluster/down.sh

## The main job end to end, as root, on a tier-3 cluster: init, the seed's PD and the MI300X examples on the stand-in image, a completion.
demo:
	tests/demo.sh

fmt:
	$(CARGO) fmt --all
