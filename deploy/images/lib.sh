# Shared by deploy/images/build and deploy/podman/*: paths, the project version, and a podman/buildah
# configuration that works on hosts where crun cannot run (cgroup hybrid mode) and the default
# ulimits are refused. Sourced, not executed.
JS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
JS_OUT="${JETSTREAM_IMAGES_DIR:-$JS_ROOT/deploy/target/images}"
# The project version from the root pom (the first <version> after the parent's artifactId).
JS_VERSION="$(sed -n '/<artifactId>jetstream-parent<\/artifactId>/,/<\/version>/s:.*<version>\(.*\)</version>.*:\1:p' "$JS_ROOT/pom.xml" | head -n1)"
JS_IMAGE_PREFIX="${JETSTREAM_IMAGE_PREFIX:-localhost/jetstream/}"

js_containers_conf() {
  mkdir -p "$JS_OUT"
  if [ -z "${CONTAINERS_CONF:-}" ]; then
    export CONTAINERS_CONF="$JS_OUT/containers.conf"
    cat > "$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  fi
}

js_need() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "$(basename "$0"): $tool is required (apt-get install $tool)" >&2; exit 1; }
  done
}

# The Debian main archive this machine's apt uses (deb822 "URIs:" or one-line "deb URL suite"
# sources), or JETSTREAM_DEBIAN_MIRROR. Exits when there is none.
js_debian_mirror() {
  local mirror="${JETSTREAM_DEBIAN_MIRROR:-}"
  if [ -z "$mirror" ]; then
    mirror="$({ cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } \
      | awk '/^URIs:/ {print $2} /^deb / {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; break}}' \
      | grep -v -- '-security' | head -n1 || true)"
  fi
  [ -n "$mirror" ] || { echo "$(basename "$0"): no Debian mirror in /etc/apt/sources.list*; set JETSTREAM_DEBIAN_MIRROR" >&2; exit 1; }
  echo "$mirror"
}
