#!/usr/bin/env bash
# Builds the container image (Dockerfile) with Debian's podman and no registry: its base is the
# Debian 13 root that scripts/runtime-check.sh makes with debootstrap (.cache/runtimes/trixie),
# imported as an image; Node and npm come from the npm registry (the Dockerfile's ADD), the
# packages from the host's npm cache. Then runs the image and checks what an operator would: /health
# answers, the first owner's credentials are in /data/first-owner.txt and log in, the admin tool
# answers in the container, SIGTERM stops it gracefully (exit 0). Needs root, podman and runc.
#
#   scripts/container-check.sh   (CONTAINER_ROOT_PID: the runtimes job, so as not to wait for a root
#                                 it failed to make; CONTAINER_PORT: 26991)
set -euo pipefail
cd "$(dirname "$0")/.."

root=.cache/runtimes/trixie
wait_minutes=${CONTAINER_WAIT_MINUTES:-30}
port=${CONTAINER_PORT:-26991}
name=confab-ci-$$
image=localhost/confab:ci
base=localhost/confab-debian13-base
say() { printf '[container %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# This machine's container runtime: runc (crun refuses cgroups v1 in hybrid mode); no raised
# limits (the sandbox may lack CAP_SYS_RESOURCE): the container gets the host's.
mkdir -p .cache/container
conf=$PWD/.cache/container/containers.conf
printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n' >"$conf"
export CONTAINERS_CONF=$conf
limits=(--ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit "nproc=4096:4096")

say "waiting for the Debian 13 root ($root, made by the runtimes job)"
deadline=$((SECONDS + wait_minutes * 60))
until [ -f "$root/.confab-root" ]; do
  [ $SECONDS -lt $deadline ] || { say "no Debian 13 root after $wait_minutes minutes"; exit 1; }
  if [ -n "${CONTAINER_ROOT_PID:-}" ] && ! kill -0 "$CONTAINER_ROOT_PID" 2>/dev/null; then
    say "the runtimes job ended without a Debian 13 root" && exit 1
  fi
  sleep 5
done

say "importing the root as $base"
# Without apt's caches (the downloaded packages and lists: 250 MB), as Debian's own images.
tar -C "$root" --one-file-system --exclude=./opt --exclude=./proc --exclude=./dev --exclude=./sys \
  --exclude=./root/.npm --exclude='./tmp/*' --exclude='./var/cache/apt/*' \
  --exclude='./var/lib/apt/lists/*' -cf - . | podman import --quiet - "$base" >/dev/null

say "building $image"
cache=$(npm config get cache)
ca_args=()
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  ca_args=(-v "$NODE_EXTRA_CA_CERTS:/etc/ssl/host-extra-ca.pem:ro"
    --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/host-extra-ca.pem)
fi
start=$SECONDS
podman build --quiet --format docker --network host "${limits[@]}" -v "$cache:/root/.npm" "${ca_args[@]}" \
  --build-arg BASE="$base" -t "$image" . >/dev/null
say "built in $((SECONDS - start)) s: $(podman image inspect --format '{{.Size}}' "$image" |
  awk '{printf "%d MB", $1 / 1e6}')"

cleanup() { podman rm -f "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT
# The image's HEALTHCHECK runs on podman's systemd timers, which this machine lacks: it is run once
# by hand below instead.
podman run -d --name "$name" --network host "${limits[@]}" --health-interval disable \
  -e PORT="$port" -e HOST=127.0.0.1 \
  -e FIRST_OWNER_EMAIL=admin@example.org "$image" >/dev/null

checks=0
ok() { checks=$((checks + 1)) && say "ok $checks - $*"; }
fail() {
  say "not ok - $*"
  podman logs "$name" 2>&1 | tail -n 40
  exit 1
}
url=http://127.0.0.1:$port
for _ in $(seq 1 120); do
  curl -fsS "$url/health" >/tmp/container-health.json 2>/dev/null && break
  sleep 1
done
grep -q '"status":"ok"' /tmp/container-health.json 2>/dev/null || fail "/health"
ok "/health: $(cat /tmp/container-health.json)"

podman healthcheck run "$name" >/dev/null || fail "the image's HEALTHCHECK"
ok "the image's HEALTHCHECK passes"
[ "$(podman exec "$name" id -un)" = confab ] || fail "runs as confab"
ok "runs as the user confab"
creds=$(podman exec "$name" cat /data/first-owner.txt) || fail "/data/first-owner.txt"
[ "$(podman exec "$name" stat -c %a /data/first-owner.txt)" = 600 ] || fail "first-owner.txt 0600"
ok "the first owner's credentials in /data/first-owner.txt (0600)"
email=$(sed -n 's/^email=//p' <<<"$creds")
password=$(sed -n 's/^password=//p' <<<"$creds")
[ "$email" = admin@example.org ] || fail "the owner named at the first start ($email)"
answer=$(curl -sS --data-urlencode "username=$email" --data-urlencode "password=$password" \
  "$url/api/v1/fetch_api_key")
grep -q '"result":"success"' <<<"$answer" || fail "login: $answer"
ok "the owner logs in (POST /api/v1/fetch_api_key)"
realms=$(podman exec "$name" node dist/src/manage.js list-realms) || fail "the admin tool"
grep -q '"realms"' <<<"$realms" || fail "the admin tool: $realms"
ok "the admin tool answers in the container"
tools=$(podman exec "$name" sh -c 'for t in g++ gcc make python3 npm; do command -v $t; done' || true)
[ -z "$tools" ] || fail "build tools in the image: $tools"
ok "no build tools in the image (g++, gcc, make, python3, npm)"

podman stop --time 60 "$name" >/dev/null
status=$(podman inspect --format '{{.State.ExitCode}}' "$name")
[ "$status" = 0 ] || fail "stopped with exit $status"
ok "SIGTERM: a graceful stop (exit 0)"
say "$checks checks passed"
# Images this check built before (untagged by this build) go.
podman image prune -f >/dev/null 2>&1 || true
