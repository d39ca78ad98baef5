#!/usr/bin/env bash
# Installs everything Mneme needs on a Debian 12 machine: system packages from
# apt (product + tests) and the npm test oracles (never linked into the
# product). Idempotent: installs only what is missing, so `make run` and
# `make test` can call it every time.
set -euo pipefail

cd "$(dirname "$0")/.."

APT_PACKAGES=(
  cmake ninja-build g++ make pkg-config
  clang libclang-rt-14-dev          # libFuzzer + sanitizer runtimes
  libpcre2-dev                      # pre-tokenizer regexes (UTF + UCP + JIT)
  nlohmann-json3-dev                # JSON (templates, CLI inputs)
  libcli11-dev                      # command line
  libboost-dev                      # HTTP server (Beast + Asio, header-only)
  libxxhash-dev                     # XXH3-128 chunk hashes (KV tier keys)
  libgtest-dev libgmock-dev libbenchmark-dev
  nodejs npm                        # test oracles only
  gnuplot-nox                       # benchmark plots
  clang-format clang-tidy
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from outside apt (e.g. a preinstalled Node.js): accept them.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do
    [[ "$p" == nodejs || "$p" == npm ]] || filtered+=("$p")
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi

if ((${#missing[@]})); then
  echo "install_deps: apt-get install ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# node-llama-cpp (the llama.cpp oracle) needs Node.js >= 20; Debian 12's own
# nodejs is 18. Say so plainly instead of failing later in an oracle test.
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if ((node_major < 20)); then
  echo "install_deps: WARNING: Node.js $(node --version 2>/dev/null || echo missing) found;" \
       "the llama.cpp oracle tests need Node.js >= 20" >&2
fi

# npm test oracles (versions pinned in tests/oracle/package.json + lock).
if [[ ! -f tests/oracle/node_modules/.mneme-installed ]] ||
   [[ tests/oracle/package.json -nt tests/oracle/node_modules/.mneme-installed ]]; then
  echo "install_deps: npm install (tests/oracle)"
  (cd tests/oracle && npm install --no-audit --no-fund --omit=optional)
  touch tests/oracle/node_modules/.mneme-installed
fi
