#!/usr/bin/env python3
"""Writes the third-party notices and a CycloneDX SBOM of one of our binaries, and checks its crates.

    release/notices.py --package NAME --target TRIPLE [--target TRIPLE ...] --out DIR

What the binary is built from is what `cargo tree -p NAME --target TRIPLE -e normal,no-proc-macro`
lists: the crates linked into it, features resolved as its own build resolves them (build
scripts, proc-macros and dev dependencies run at build time and are not linked), over each target
given (an image holds two arches). From them:

- DIR/THIRD-PARTY-NOTICES.txt: each crate's name, version, licence expression and source, then
  the licence texts each crate's package carries (LICENSE*, LICENCE*, COPYING*, NOTICE*, or its
  `license-file`), a text shared by several crates printed once;
- DIR/sbom.cdx.json: a CycloneDX 1.5 SBOM: the binary, each crate as a component (package URL
  `pkg:cargo/NAME@VERSION`, licence expression, the SHA-256 of its package from Cargo.lock) and the
  dependency graph between them. Reproducible: sorted, the epoch as its time, a serial number
  derived from its content.

It refuses (exit 1, naming the crate and what to do) a crate whose licence deny.toml does not allow, a
crate without a licence expression, and a dependency that comes from anywhere but the one
registry of Cargo.lock (a git or path dependency outside the workspace). Without --out it only
checks: `make verify` runs it so for both binaries on every release target.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
import uuid

# SPDX identifiers a dependency may be licensed under (one alternative of an OR suffices): deny.toml's
# `licenses.allow`, which cargo-deny checks over the whole graph (`make verify`).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deny.toml"), "rb") as f:
    ALLOWED = set(tomllib.load(f)["licenses"]["allow"])
LICENSE_FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE)", re.IGNORECASE)
EPOCH = "1970-01-01T00:00:00Z"


class Refused(Exception):
    pass


def allowed(expression):
    """Whether an SPDX expression (OR, AND, WITH, parentheses; `/` as an old OR) is satisfied."""
    tokens = re.findall(r"\(|\)|[^\s()]+", expression.replace("/", " OR "))
    position = 0

    def term():
        nonlocal position
        if position < len(tokens) and tokens[position] == "(":
            position += 1
            value = either()
            position += 1  # ")"
            return value
        licence = tokens[position]
        position += 1
        if position + 1 < len(tokens) and tokens[position] == "WITH":
            licence = f"{licence} WITH {tokens[position + 1]}"
            position += 2
        # With its exception, as cargo-deny matches it: `X WITH Y` is allowed when listed so.
        return licence in ALLOWED

    def joined(operator, part, join):
        nonlocal position
        value = part()
        while position < len(tokens) and tokens[position] == operator:
            position += 1
            value = join(value, part())
        return value

    def both():
        return joined("AND", term, lambda a, b: a and b)

    def either():
        return joined("OR", both, lambda a, b: a or b)

    return either()


def cargo(*args):
    done = subprocess.run(["cargo", *args, "--locked"], capture_output=True, text=True)
    if done.returncode:
        raise Refused(f"cargo {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def crates(package, targets):
    """(name, version) of every crate linked into `package` for any of `targets`, itself excluded."""
    found = set()
    for target in targets:
        listed = cargo("tree", "-p", package, "--target", target, "-e", "normal,no-proc-macro", "--prefix", "none", "-f", "{p}")
        for line in listed.splitlines():
            name, version = line.split()[:2]
            found.add((name, version.removeprefix("v")))
    return {(n, v) for n, v in found if n != package}


def licence_texts(package):
    directory = os.path.dirname(package["manifest_path"])
    paths = {os.path.join(directory, f) for f in os.listdir(directory) if LICENSE_FILE.match(f)}
    if package.get("license_file"):
        paths.add(os.path.join(directory, package["license_file"]))
    return [(os.path.basename(p), open(p, encoding="utf-8", errors="replace").read()) for p in sorted(paths) if os.path.isfile(p)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", required=True)
    parser.add_argument("--target", action="append", required=True)
    parser.add_argument("--out", help="where the notices and the SBOM go (without: --check only)")
    args = parser.parse_args()

    filters = [f for t in args.target for f in ("--filter-platform", t)]
    metadata = json.loads(cargo("metadata", "--format-version", "1", *filters))
    packages = {(p["name"], p["version"]): p for p in metadata["packages"]}
    root = next(p for p in metadata["packages"] if p["name"] == args.package and p["source"] is None)
    with open(os.path.join(metadata["workspace_root"], "Cargo.lock"), "rb") as f:
        checksums = {(p["name"], p["version"]): p.get("checksum") for p in tomllib.load(f)["package"]}
    linked = sorted(crates(args.package, args.target))
    registries = {packages[c]["source"] for c in linked if packages[c]["source"] is not None}

    members = set(metadata["workspace_members"])
    refused = []
    for key in linked:
        package = packages[key]
        name = f"{key[0]} {key[1]}"
        source = package["source"] or ("workspace" if package["id"] in members else "a path outside the workspace")
        if source != "workspace" and not source.startswith("registry+"):
            refused.append(f"{name}: comes from {source}; depend on a released version instead")
        if not package.get("license"):
            refused.append(f"{name}: declares no licence expression; replace the crate or use a release of it that declares one")
        elif not allowed(package["license"]):
            refused.append(f"{name}: licensed {package['license']}, none of which deny.toml's licenses.allow lists; replace the crate or review the licence and allow it")
    if len(registries) > 1:
        refused.append(f"dependencies come from {len(registries)} registries ({', '.join(sorted(registries))}); use one")
    if refused:
        raise Refused("refused:\n" + "\n".join(refused))
    print(f"{args.package} ({' '.join(args.target)}): {len(linked)} crates, every licence allowed, one registry", file=sys.stderr)
    if not args.out:
        return

    os.makedirs(args.out, exist_ok=True)
    texts = {}
    lines = [
        f"Third-party software in {args.package} {root['version']}",
        f"({', '.join(args.target)}), as linked by cargo from Cargo.lock. Each crate's licence",
        "texts follow the list; a text shared by several crates is printed once.",
        "",
    ]
    textless = []
    for key in linked:
        package = packages[key]
        lines.append(f"{key[0]} {key[1]}: {package['license']} ({'registry' if package['source'] else 'workspace'})")
        found = licence_texts(package)
        for file, text in found:
            texts.setdefault(text.strip(), []).append(f"{key[0]} {key[1]} ({file})")
        if not found:
            textless.append(f"{key[0]} {key[1]} ({package['license']})")
    if textless:
        lines += [
            "",
            "These crates' packages carry no licence text; the licence their expression names",
            "applies, whose text is printed below for other crates: " + ", ".join(textless) + ".",
        ]
    for text, owners in sorted(texts.items(), key=lambda t: t[1]):
        lines += ["", "=" * 78, "The licence text of: " + ", ".join(owners), "=" * 78, "", text]
    with open(os.path.join(args.out, "THIRD-PARTY-NOTICES.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")

    def purl(key):
        return f"pkg:cargo/{key[0]}@{key[1]}"

    nodes = {n["id"]: n for n in metadata["resolve"]["nodes"]}
    id_of = {(p["name"], p["version"]): p["id"] for p in metadata["packages"]}
    key_of = {v: k for k, v in id_of.items()}
    in_graph = set(linked) | {(args.package, root["version"])}
    components = []
    for key in linked:
        component = {
            "type": "library",
            "bom-ref": purl(key),
            "name": key[0],
            "version": key[1],
            "purl": purl(key),
            "licenses": [{"expression": packages[key]["license"]}],
        }
        if checksums.get(key):
            component["hashes"] = [{"alg": "SHA-256", "content": checksums[key]}]
        components.append(component)
    dependencies = [
        {
            "ref": purl(key),
            "dependsOn": sorted({purl(key_of[d["pkg"]]) for d in nodes[id_of[key]]["deps"] if key_of[d["pkg"]] in in_graph}),
        }
        for key in sorted(in_graph)
    ]
    bom = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "version": 1,
        "metadata": {
            "timestamp": EPOCH,
            "tools": {"components": [{"type": "application", "name": "release/notices.py"}]},
            "component": {
                "type": "application",
                "bom-ref": purl((args.package, root["version"])),
                "name": args.package,
                "version": root["version"],
                "purl": purl((args.package, root["version"])),
                "licenses": [{"expression": root["license"]}],
            },
            "properties": [{"name": "cargo:target", "value": t} for t in args.target],
        },
        "components": components,
        "dependencies": dependencies,
    }
    content = json.dumps(bom, sort_keys=True).encode()
    bom["serialNumber"] = f"urn:uuid:{uuid.UUID(bytes=hashlib.sha256(content).digest()[:16], version=5)}"
    with open(os.path.join(args.out, "sbom.cdx.json"), "w") as f:
        json.dump(bom, f, sort_keys=True, indent=1)
        f.write("\n")


if __name__ == "__main__":
    try:
        main()
    except Refused as refused:
        print(f"notices.py: {refused}", file=sys.stderr)
        sys.exit(1)
