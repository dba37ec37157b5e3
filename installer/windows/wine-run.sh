#!/usr/bin/env bash
# Runs a Windows program under wine so that CTest (or any script reading its output) gets the
# output and the exit code and does not hang.
#
#   wine-run.sh [--prefix=DIR] program.exe [args...]   run it (CMAKE_CROSSCOMPILING_EMULATOR)
#   wine-run.sh [--prefix=DIR] --start                 only create/warm the prefix
#   wine-run.sh [--prefix=DIR] --stop                  stop its wineserver (and services)
#
# Why: the first wine process of a session starts wineserver, services.exe, winedevice.exe and
# explorer.exe; they inherit the caller's stdout/stderr and keep CTest's pipes open long after the
# test exits, so every test waits for the pipe to close (or hangs). We start them first, detached
# from any pipe (setsid, /dev/null), under a lock so parallel tests warm the prefix only once.
#
# The prefix: --prefix, else $WINEPREFIX, else ~/.cache/magnetar/wineprefix. WINEDEBUG defaults
# to -all. MAGNETAR_TESTDATA, if a Unix path, is passed on as its Z: drive path.
set -euo pipefail

prefix=${WINEPREFIX:-$HOME/.cache/magnetar/wineprefix}
if [[ ${1:-} == --prefix=* ]]; then
  prefix=${1#--prefix=}
  shift
fi
[ $# -ge 1 ] || { echo "usage: $0 [--prefix=DIR] program.exe [args...] | --start | --stop" >&2; exit 2; }

export WINEPREFIX=$prefix
# wine converts the Unix argv and environment to UTF-16 with the locale's charset: make it UTF-8
# so non-ASCII paths survive.
case "$(locale charmap 2>/dev/null)" in
  UTF-8) ;;
  *) export LC_ALL=C.UTF-8 ;;
esac
export WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}  # no Mono/Gecko install prompts
# How long the wineserver (and with it the services) stays up after the last program exits.
persist_s=${MAGNETAR_WINE_PERSIST_S:-600}

# wineserver's socket: /tmp/<dir>/server-<dev>-<inode of the prefix>/socket, where <dir> is
# .wine-<uid> upstream and, on Debian, a random name recorded in $WINEPREFIX/wineserver.
server_socket() {
  local dev ino dir=".wine-$(id -u)"
  read -r dev ino < <(stat -c '%d %i' "$WINEPREFIX")
  [ -r "$WINEPREFIX/wineserver" ] && dir=$(cat "$WINEPREFIX/wineserver")
  printf '/tmp/%s/server-%x-%x/socket' "$dir" "$dev" "$ino"
}

start_wine() {
  mkdir -p "$WINEPREFIX"
  exec 9>"$WINEPREFIX.lock"
  flock 9
  if [ ! -S "$(server_socket)" ]; then
    setsid wineserver -p"$persist_s" </dev/null >/dev/null 2>&1 || true
    # Creates the prefix on first use (about 20 s) and starts the services, all detached.
    setsid -w wine cmd /c exit </dev/null >/dev/null 2>&1 || true
  fi
  flock -u 9
  exec 9>&-
}

case $1 in
  --start) start_wine; exit 0 ;;
  --stop)
    [ -d "$WINEPREFIX" ] && wineserver -k >/dev/null 2>&1 || true
    exit 0 ;;
esac

start_wine
if [[ ${MAGNETAR_TESTDATA:-} == /* ]]; then
  export MAGNETAR_TESTDATA="Z:${MAGNETAR_TESTDATA//\//\\}"
fi
exec wine "$@"
