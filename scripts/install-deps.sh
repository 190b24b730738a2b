#!/usr/bin/env bash
# Installs what bakeoff itself and its tests need on a fresh Debian 12 machine (as root): the load
# generators it is compared with, the real services it starts, and the runtimes of the stacks.
# Language toolchains (cargo, go, node, java/maven, python3) are expected on the machine.
set -euo pipefail

packages=(
  build-essential pkg-config python3-dev python3-venv   # uWSGI and C extensions build from source
  wrk apache2-utils hyperfine nghttp2-client             # peers of the load generator (bench/; h2load)
  nginx haproxy                                          # proxy study upstream and C reference proxy
  openssl                                                # the load generator's TLS tests make their certificates
  postgresql                                             # products on PostgreSQL, with its client psql
  pypy3 pypy3-venv pypy3-dev                             # PyPy stacks
  maven openjdk-17-jdk-headless                          # JVM stacks and the document store
  libasio-dev                                            # the C++ proxy
  chromium                                               # the HTML report test renders the page
  patchelf ccache                                        # Nuitka
  openssh-server                                         # sshd inside test namespaces (ssh:// clients)
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for tool in cargo go node npm java mvn python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not on PATH; install its toolchain first" >&2; exit 1; }
done
# scripts/test.sh checks formatting and lints: the toolchain's rustfmt and clippy components.
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    command -v rustup >/dev/null || { echo "error: cargo $component is missing and rustup is not on PATH to add it" >&2; exit 1; }
    echo "installing: rust component $component"
    rustup component add "$component"
  fi
done
