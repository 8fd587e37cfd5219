#!/usr/bin/env bash
# cmake --install gives a working qreplay, and a one-file ns-3 program compiles and links against
# the installed module through pkg-config. Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d /tmp/qr-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(dirname "$(find "$tmp/prefix" -name qreplay-ns3.pc)")
export PKG_CONFIG_PATH=$pc
# shellcheck disable=SC2046
g++ -std=c++17 "$src/tests/install/one-file.cc" $(pkg-config --cflags --libs qreplay-ns3) -o "$tmp/prog"
out=$("$tmp/prog")
echo "one-file program: $out"
[ "$out" = "received 400000 drops $(echo "$out" | sed 's/.* drops //')" ] || { echo "FAIL: TCP did not deliver every byte"; exit 1; }
[ "$(echo "$out" | sed 's/.* drops //')" -gt 0 ] || { echo "FAIL: a 30 KB buffer under two bulk senders must drop"; exit 1; }
# the installed program finds its own data folder, not the source tree's
got=$(cd "$tmp" && "$tmp/prefix/bin/qreplay" scenario "$src/scenarios/fattree-k4-websearch.ini" --get traffic.size_cdf)
[ "$got" = "$(cd "$tmp/prefix/share/qreplay/data" && pwd -P)/websearch.cdf" ] || { echo "FAIL: size_cdf resolved to $got"; exit 1; }
[ -f "$tmp/prefix/share/qreplay/analysis/plot_results.py" ] || { echo "FAIL: analysis not installed"; exit 1; }
# no path of the build machine's source tree in the program (debug info aside)
objcopy --strip-debug "$tmp/prefix/bin/qreplay" "$tmp/stripped"
if grep -q -a "$src/" "$tmp/stripped"; then echo "FAIL: $src compiled into qreplay"; exit 1; fi
echo "1 passed, 0 failed"
