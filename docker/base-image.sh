#!/usr/bin/env bash
# Makes the base image debian:bookworm-slim locally when no registry can be reached: debootstrap
# (minbase) from the Debian mirror this machine's apt uses, trimmed the way Debian's slim images are
# (no documentation, man pages or translations, now or after later installs), imported and tagged.
# The Dockerfiles stay the standard ones. Does nothing when the image is already there.
# Usage: docker/base-image.sh [TAG]   (run as root; needs debootstrap and a running docker daemon)
set -euo pipefail
TAG=${1:-debian:bookworm-slim}
SUITE=bookworm

if docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "base-image: $TAG already present"
    exit 0
fi

# The configured mirror: the first Debian URI in the host's apt sources (deb822 or one-line format).
mirror=""
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    mirror=$(awk '/^URIs:/ && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
    mirror=$(awk '/^deb / && $0 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
fi
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d /tmp/ggserve-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
echo "base-image: debootstrap $SUITE from $mirror"
start=$SECONDS
debootstrap --variant=minbase "$SUITE" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    exit 1
}

# The same apt sources as the host's Debian entries (main, updates, security), as in Debian's images.
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    rm -f "$root/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/debian.sources"
fi

# Slim: what Debian's -slim images leave out, kept out of later installs by dpkg path excludes.
cat >"$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
echo 'APT::Install-Recommends "false";' >"$root/etc/apt/apt.conf.d/docker-no-recommends"
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/* "$root"/var/lib/apt/lists/* \
       "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old "$root"/var/log/*.log "$root"/var/log/apt/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
rm -f "$root/etc/hostname" "$root/etc/resolv.conf"
: >"$root/etc/machine-id"

tar --numeric-owner -C "$root" -c . | docker import -c 'CMD ["bash"]' -m "debootstrap $SUITE minbase, slimmed" - "$TAG" >/dev/null
echo "base-image: $TAG made in $((SECONDS - start)) s ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}'))"
