#!/usr/bin/env bash
# Builds the compose stack's base images from files already on this machine, because CI cannot pull
# from any image registry: each image is a root filesystem of Debian binaries (with the libraries
# `ldd` names) plus a static busybox, turned into an image with `docker import`.
#
#   bash .ci/local-images.sh            builds what is missing, prints the image variables for compose
#
# Images are tagged with the packaged version and a digest of this script, so a warm machine reuses
# them and a changed recipe rebuilds them. Needs: a running docker daemon, node/npm, busybox-static,
# redis-server, nginx, prometheus (Debian packages; .ci/compose.sh installs them).
set -euo pipefail

DOCKER=${DOCKER:-docker}
recipe=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-8)
work=$(mktemp -d "${TMPDIR:-/tmp}/local-images.XXXXXX")
trap 'rm -rf "$work"' EXIT

# rootfs_new DIR: an empty merged-/usr tree with the accounts the real images have.
rootfs_new() {
  local root=$1
  mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,tmp,root,run,var/tmp,home/node}
  ln -s usr/bin "$root/bin"; ln -s usr/sbin "$root/sbin"; ln -s usr/lib "$root/lib"; ln -s usr/lib64 "$root/lib64"
  chmod 1777 "$root/tmp" "$root/var/tmp"
  cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nginx:x:101:101:nginx:/nonexistent:/bin/false
node:x:1000:1000::/home/node:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
  cat >"$root/etc/group" <<'EOF'
root:x:0:
nginx:x:101:
node:x:1000:
nogroup:x:65534:
EOF
  echo 'hosts: files dns' >"$root/etc/nsswitch.conf"
  chown 1000:1000 "$root/home/node"
  # Static busybox: a shell for RUN steps and npm scripts, wget/nc for health checks.
  cp /bin/busybox "$root/usr/bin/busybox"
  local applet
  for applet in $(/bin/busybox --list); do
    [ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/usr/bin/$applet"
  done
}

# rootfs_add_elf DIR FILE...: copies each executable (dereferenced) and every library it loads.
rootfs_add_elf() {
  local root=$1 f lib; shift
  for f in "$@"; do
    cp -L --parents "$f" "$root/"
    for lib in $(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
      [ -e "$root$lib" ] || cp -L --parents "$lib" "$root/"
    done
  done
}

# image_import DIR TAG CHANGE...: imports the tree as TAG with Dockerfile-style --change lines.
image_import() {
  local root=$1 tag=$2; shift 2
  local args=() c
  for c in "$@"; do args+=(--change "$c"); done
  tar -C "$root" --numeric-owner -cf - . | "$DOCKER" import "${args[@]}" - "$tag" >/dev/null
}

have() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

path_env='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

# Node: stands in for node:20-bookworm-slim (node + npm on PATH, a `node` user with uid 1000).
node_tag="mcp-ci/node:$(node -p process.versions.node)-$recipe"
if ! have "$node_tag"; then
  r="$work/node"; rootfs_new "$r"
  rootfs_add_elf "$r" "$(readlink -f "$(command -v node)")"
  npm_root=$(npm root -g)/npm
  mkdir -p "$r/usr/lib/node_modules" && cp -a "$npm_root" "$r/usr/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/bin/npx"
  mkdir -p "$r/etc/ssl/certs" && cp -L /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
  image_import "$r" "$node_tag" "$path_env" 'CMD ["node"]'
fi

# Redis: stands in for redis (redis-server and redis-cli on PATH, data in /data).
redis_tag="mcp-ci/redis:$(dpkg-query -W -f '${Version}' redis-server | tr ':~+' '---')-$recipe"
if ! have "$redis_tag"; then
  r="$work/redis"; rootfs_new "$r"
  rootfs_add_elf "$r" /usr/bin/redis-server /usr/bin/redis-cli
  mkdir -p "$r/data" && chown 65534:65534 "$r/data"
  image_import "$r" "$redis_tag" "$path_env" 'WORKDIR /data' 'USER nobody' 'EXPOSE 6379' 'CMD ["redis-server"]'
fi

# nginx: stands in for nginx (binary on PATH, Debian's compiled-in temp paths, `nginx` user).
nginx_tag="mcp-ci/nginx:$(dpkg-query -W -f '${Version}' nginx | tr ':~+' '---')-$recipe"
if ! have "$nginx_tag"; then
  r="$work/nginx"; rootfs_new "$r"
  rootfs_add_elf "$r" /usr/sbin/nginx
  mkdir -p "$r/etc/nginx" "$r/var/lib/nginx" "$r/var/log/nginx" "$r/var/lock"
  cp /etc/nginx/mime.types "$r/etc/nginx/"
  image_import "$r" "$nginx_tag" "$path_env" 'EXPOSE 80' 'CMD ["nginx", "-g", "daemon off;"]'
fi

# Prometheus: stands in for prom/prometheus (ENTRYPOINT /bin/prometheus, data in /prometheus, nobody).
prom_tag="mcp-ci/prometheus:$(dpkg-query -W -f '${Version}' prometheus | tr ':~+' '---')-$recipe"
if ! have "$prom_tag"; then
  r="$work/prometheus"; rootfs_new "$r"
  rootfs_add_elf "$r" /usr/bin/prometheus
  mkdir -p "$r/etc/prometheus" "$r/prometheus" && chown 65534:65534 "$r/prometheus"
  image_import "$r" "$prom_tag" "$path_env" 'WORKDIR /prometheus' 'USER nobody' 'EXPOSE 9090' \
    'ENTRYPOINT ["/bin/prometheus"]' \
    'CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]'
fi

# Images of an older recipe or package version are dead weight on a long-lived machine.
for stale in $("$DOCKER" images --format '{{.Repository}}:{{.Tag}}' --filter 'reference=mcp-ci/*'); do
  case "$stale" in "$node_tag" | "$redis_tag" | "$nginx_tag" | "$prom_tag") ;; *) "$DOCKER" rmi "$stale" >/dev/null 2>&1 || true ;; esac
done

cat <<EOF
NODE_IMAGE=$node_tag
REDIS_IMAGE=$redis_tag
NGINX_IMAGE=$nginx_tag
PROMETHEUS_IMAGE=$prom_tag
EOF
