#!/usr/bin/env python3
"""Writes text stubs (.tbd) of the macOS frameworks kubectl-infera links, so Zig can link the macOS
binaries without Apple's SDK.

    release/macos-stubs.py SDKROOT

Zig ships libSystem's stubs but no framework. The frameworks linked are Security and
CoreFoundation (rustls' platform verifier, through security-framework and core-foundation); their
exported symbols are, for the linker, exactly the ones declared in the `extern "C"` blocks of
security-framework-sys and core-foundation-sys, whose sources (at the Cargo.lock versions) this reads
from `cargo metadata`. A stub only tells the linker which dylib (install name) binds a symbol: the
binary then loads the real framework on macOS, as with Apple's SDK. Format: TAPI text-based stub v4
(as in cargo-zigbuild's src/macos/*.tbd); cargo-zigbuild passes -F $SDKROOT/System/Library/Frameworks.
"""

import json
import os
import re
import subprocess
import sys

FRAMEWORKS = {
    "security-framework-sys": ("Security", "/System/Library/Frameworks/Security.framework/Versions/A/Security"),
    "core-foundation-sys": ("CoreFoundation", "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation"),
}
TARGETS = "[ x86_64-macos, arm64-macos ]"


def extern_blocks(text):
    """The bodies of `extern "C" { ... }` blocks."""
    for match in re.finditer(r'extern\s+"C"\s*\{', text):
        depth, start = 1, match.end()
        i = start
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        yield text[start : i - 1]


def symbols(src_dir):
    names = set()
    for root, _, files in os.walk(src_dir):
        for name in files:
            if not name.endswith(".rs"):
                continue
            with open(os.path.join(root, name)) as f:
                text = f.read()
            for block in extern_blocks(text):
                # `#[link_name = "X"]` (possibly in cfg_attr) renames the next item: keep both.
                names.update(re.findall(r'link_name\s*=\s*"([^"]+)"', block))
                names.update(re.findall(r"\bpub\s+(?:unsafe\s+)?fn\s+(\w+)", block))
                names.update(re.findall(r"\bpub\s+static\s+(?:mut\s+)?(\w+)", block))
    return sorted("_" + n for n in names)


def main():
    sdkroot = sys.argv[1]
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", "aarch64-apple-darwin"],
            check=True, capture_output=True, text=True,
        ).stdout
    )
    found = set()
    for package in meta["packages"]:
        if package["name"] not in FRAMEWORKS:
            continue
        framework, install_name = FRAMEWORKS[package["name"]]
        syms = symbols(os.path.join(os.path.dirname(package["manifest_path"]), "src"))
        out_dir = os.path.join(sdkroot, "System", "Library", "Frameworks", f"{framework}.framework")
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"{framework}.tbd"), "w") as f:
            f.write("--- !tapi-tbd\ntbd-version:     4\n")
            f.write(f"targets:         {TARGETS}\n")
            f.write(f"install-name:    '{install_name}'\n")
            f.write("exports:\n")
            f.write(f"  - targets:         {TARGETS}\n")
            f.write("    symbols:         [ " + ",\n                       ".join(f"'{s}'" for s in syms) + " ]\n")
            f.write("...\n")
        found.add(package["name"])
    missing = set(FRAMEWORKS) - found
    if missing:
        sys.exit(f"macos-stubs.py: {', '.join(sorted(missing))} not in the dependency graph; update FRAMEWORKS")


if __name__ == "__main__":
    main()
