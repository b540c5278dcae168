#!/usr/bin/env bash
# Serves a Bazel HTTP remote cache from DIR with nginx on 127.0.0.1:PORT, in
# the foreground until killed. Bazel's protocol is GET/PUT of /ac/<digest>
# and /cas/<digest>; nginx's WebDAV module takes the PUTs.
#
#   tools/bazel run //tools/remote_cache:serve -- DIR [PORT]   (default port 8080)
#   tools/bazel build --config=remote-cache //...             (in another shell)
#
# nginx is the toolchain root's (/usr/sbin/nginx): `tools/bazel run` runs this
# there, where DIR must lie in the checkout or under /tmp.
set -euo pipefail

# Under `bazel run`, DIR is relative to where the command was typed.
cd "${BUILD_WORKING_DIRECTORY:-.}"

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 DIR [PORT]" >&2
  exit 2
fi
dir="$(mkdir -p "$1" && cd "$1" && pwd -P)"
port="${2:-8080}"
nginx="${NGINX:-/usr/sbin/nginx}"
[[ -x "${nginx}" ]] || { echo "$0: no nginx at ${nginx} (set NGINX)" >&2; exit 1; }

# nginx keeps its state (pid, logs, request bodies) beside the cache.
mkdir -p "${dir}/cache" "${dir}/nginx/tmp"
cat >"${dir}/nginx/nginx.conf" <<CONF
worker_processes 1;
pid ${dir}/nginx/nginx.pid;
error_log ${dir}/nginx/error.log warn;
events { worker_connections 64; }
http {
  access_log ${dir}/nginx/access.log;
  client_body_temp_path ${dir}/nginx/tmp/body;
  proxy_temp_path ${dir}/nginx/tmp/proxy;
  fastcgi_temp_path ${dir}/nginx/tmp/fastcgi;
  uwsgi_temp_path ${dir}/nginx/tmp/uwsgi;
  scgi_temp_path ${dir}/nginx/tmp/scgi;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${port};
    root ${dir}/cache;
    client_max_body_size 0;
    location / {
      dav_methods PUT;
      create_full_put_path on;
    }
  }
}
CONF
# Workers run as root when the master does: the cache belongs to whoever started it.
if [[ "$(id -u)" == 0 ]]; then
  sed -i '1i user root;' "${dir}/nginx/nginx.conf"
fi
echo "serve.sh: Bazel remote cache at http://127.0.0.1:${port} (files in ${dir}/cache)" >&2
exec "${nginx}" -p "${dir}/nginx" -c "${dir}/nginx/nginx.conf" -e "${dir}/nginx/error.log" -g 'daemon off;'
