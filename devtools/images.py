"""The container images built on a machine with no container registry (tests/images, `make test-images`).

Containerfile and Containerfile.worker start FROM docker.io/library/debian:bookworm-slim. With no registry to pull
it from, that base is bootstrapped here with mmdebstrap (Debian bookworm, the minimal set, documentation left out as
the official slim image leaves it out) and stored in buildah's storage under that name, so the Containerfiles stay
the ordinary ones that build anywhere else. The bootstrap's tarball is kept in ~/.cache/latency-atlas/images under a
key of everything that went into it, and the image in buildah's storage carries the key as a label: a second run
uses either, a change of the recipe makes a new one.

Builds run with `buildah bud --isolation chroot --pull=never` (no container runtime is needed for chroot
isolation). The host's CA bundle is handed to pip as the build secret `pip_cert` (mounted for the install step
only, never stored in a layer): HTTPS to the package index may pass through a proxy that this host trusts and a
fresh Debian does not.

`python -m devtools.images [--central TAG] [--worker TAG] [--demo TAG]`: the base, then the images asked for.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "docker.io/library/debian:bookworm-slim"
BASE_LABEL = "latency-atlas.base-key"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "latency-atlas" / "images"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
TOOLS = ("buildah", "mmdebstrap")

SUITE = "bookworm"
SOURCES = (
    f"deb http://deb.debian.org/debian {SUITE} main",
    f"deb http://deb.debian.org/debian {SUITE}-updates main",
    f"deb http://deb.debian.org/debian-security {SUITE}-security main",
)
# What the official slim image leaves out, kept in the image's dpkg configuration so later installs leave it out too.
EXCLUDED = ("/usr/share/man/*", "/usr/share/doc/*", "/usr/share/locale/*", "/usr/share/info/*")
# The official images' apt settings: no .deb files or package caches left in a layer, no translations.
APT_CONF = {
    "docker-clean": (
        'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb '
        '/var/cache/apt/*.bin || true"; };\n'
        'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb '
        '/var/cache/apt/*.bin || true"; };\n'
        'Dir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n'
    ),
    "docker-no-languages": 'Acquire::Languages "none";\n',
    "docker-autoremove-suggests": 'Apt::AutoRemove::SuggestsImportant "false";\n',
}


class ImageError(RuntimeError):
    pass


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def install_tools() -> None:
    """buildah and mmdebstrap from Debian's packages (root only); ImageError when that fails."""
    if not missing_tools():
        return
    if os.geteuid() != 0:
        raise ImageError(f"{', '.join(missing_tools())} missing, and only root may install them")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for step in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *TOOLS]):
        done = subprocess.run(step, env=env, capture_output=True, text=True, timeout=900, check=False)
        if done.returncode != 0:
            raise ImageError(f"{' '.join(step)} failed:\n{(done.stdout + done.stderr)[-2000:]}")
    if missing_tools():
        raise ImageError(f"{', '.join(missing_tools())} still missing after apt-get install")


def _run(args: list[str], timeout: float = 1800, **kwargs) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False, **kwargs)
    if done.returncode != 0:
        raise ImageError(f"{' '.join(args[:3])} ... exited {done.returncode}:\n{(done.stdout + done.stderr)[-4000:]}")
    return done.stdout


def _hook(name: str, text: str) -> str:
    # mmdebstrap runs a customize hook with the chroot's path as $1.
    return f"--customize-hook=printf '%s' {shlex.quote(text)} > \"$1/etc/apt/apt.conf.d/{name}\""


def bootstrap_args() -> list[str]:
    """mmdebstrap's options and arguments, less the output path."""
    args = [
        "--variant=minbase",
        "--mode=root",
        "--format=tar",
        # /usr merged by the hook, not by the usrmerge package, which would leave Perl in the image.
        "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
        *(f"--dpkgopt=path-exclude={path}" for path in EXCLUDED),
        "--dpkgopt=path-include=/usr/share/doc/*/copyright",
        *(_hook(name, text) for name, text in APT_CONF.items()),
        # mmdebstrap's own clean-up asks apt which caches to remove, and docker-clean names none.
        '--customize-hook=rm -f "$1"/var/cache/apt/*.bin',
        SUITE,
    ]
    return args


def base_key() -> str:
    """What the base is made of: mmdebstrap's version, its options and the sources."""
    version = _run(["mmdebstrap", "--version"]).strip()
    recipe = json.dumps([version, bootstrap_args(), SOURCES])
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def image_labels(name: str) -> dict[str, str] | None:
    """An image's labels, or None when buildah's storage has no such image."""
    done = subprocess.run(
        ["buildah", "inspect", "--type", "image", name], capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        return None
    config = json.loads(done.stdout).get("OCIv1", {}).get("config", {})
    return config.get("Labels") or {}


def ensure_base(cache: Path = CACHE) -> str:
    """BASE in buildah's storage, bootstrapped or imported from the cache when it is not there with this recipe's
    key. Returns what was done: "present", "imported" or "bootstrapped"."""
    key = base_key()
    labels = image_labels(BASE)
    if labels is not None and labels.get(BASE_LABEL) == key:
        return "present"
    tarball = cache / key / "rootfs.tar"
    done = "imported"
    if not tarball.exists():
        tarball.parent.mkdir(parents=True, exist_ok=True)
        partial = tarball.with_suffix(".partial")
        _run(["mmdebstrap", *bootstrap_args(), str(partial), *SOURCES])
        partial.replace(tarball)
        done = "bootstrapped"
    container = _run(["buildah", "from", "scratch"]).strip()
    try:
        _run(["buildah", "add", container, str(tarball), "/"])
        _run(
            [
                "buildah", "config",
                "--label", f"{BASE_LABEL}={key}",
                "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "--cmd", '["bash"]',
                container,
            ]
        )  # fmt: skip
        _run(["buildah", "commit", "--quiet", "--rm", container, BASE])
    except ImageError:
        subprocess.run(["buildah", "rm", container], capture_output=True, timeout=60, check=False)
        raise
    return done


def image_id(name: str) -> str | None:
    done = subprocess.run(
        ["buildah", "images", "--noheading", "--no-trunc", "--format", "{{.ID}}", name],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout.strip() or None if done.returncode == 0 else None


def build(tag: str, containerfile: str = "Containerfile", target: str | None = None) -> None:
    """`buildah bud` of a Containerfile of the checkout, from the base in storage only (--pull=never).

    The image the tag named before, if the build changed it, is removed, and with it the cached layers only it
    used: a build per change of the code would otherwise keep every earlier one in buildah's storage. The layers
    the new image shares (the base, the locked installs) stay, and so does an image still tagged otherwise."""
    before = image_id(tag)
    args = ["buildah", "bud", "--isolation", "chroot", "--pull=never", "--layers", "-f", containerfile, "-t", tag]
    if target:
        args += ["--target", target]
    if HOST_CA.exists():
        args += ["--secret", f"id=pip_cert,src={HOST_CA}"]
    _run([*args, "."], cwd=ROOT, timeout=3600)
    if before is not None and before != image_id(tag):
        # No --force: an image another tag or a container still uses is kept, and that is no failure here.
        subprocess.run(["buildah", "rmi", before], capture_output=True, timeout=120, check=False)


def image_config(name: str) -> dict:
    """An image's OCI config (Entrypoint, Cmd, Env, User, WorkingDir, Labels)."""
    out = _run(["buildah", "inspect", "--type", "image", name], timeout=60)
    return json.loads(out)["OCIv1"]["config"]


def image_size(name: str) -> str:
    """The image's size as `buildah images` shows it (its layers, uncompressed)."""
    return _run(["buildah", "images", "--format", "{{.Size}}", name], timeout=60).strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--central", metavar="TAG", help="build the central image (Containerfile) as TAG")
    parser.add_argument("--worker", metavar="TAG", help="build the region-worker image (Containerfile.worker)")
    parser.add_argument("--demo", metavar="TAG", help="build the central image's demo stage as TAG")
    args = parser.parse_args(argv)
    install_tools()
    print(f"base {BASE}: {ensure_base()}")
    for tag, containerfile, target in (
        (args.central, "Containerfile", "central"),
        (args.worker, "Containerfile.worker", None),
        (args.demo, "Containerfile", "demo"),
    ):
        if tag:
            build(tag, containerfile, target)
            print(f"{tag}: {image_size(tag)}")


if __name__ == "__main__":
    main()
