#!/usr/bin/env bash
# Starts magnetar.exe under wine on a virtual X display (Xvfb, Mesa's software OpenGL), waits for
# its window, takes a screenshot and checks that something was drawn (not a blank screen).
#   installer/windows/gui-smoke.sh BUILD_DIR [SCREENSHOT.png]   (default BUILD_DIR/gui-wine.png)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [SCREENSHOT.png]}" && pwd)
shot=${2:-$build/gui-wine.png}
exe="$build/app/gui/magnetar.exe"
[ -f "$exe" ] || { echo "no $exe" >&2; exit 1; }
command -v Xvfb >/dev/null && command -v xdotool >/dev/null && command -v import >/dev/null ||
  { echo "needs xvfb, xdotool, imagemagick" >&2; exit 1; }

# A prefix of its own: wine's desktop process binds to the display it was started with.
prefix="$build/wineprefix-gui"
display=":$(( 90 + RANDOM % 9 ))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
app_pid=""
cleanup() {
  [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
  DISPLAY=$display "$here/wine-run.sh" --prefix="$prefix" --stop
  kill "$xvfb_pid" 2>/dev/null || true
}
trap cleanup EXIT
export DISPLAY=$display
sleep 1
"$here/wine-run.sh" --prefix="$prefix" --start

t0=$(date +%s)
# The app keeps its settings and chats under the prefix's %APPDATA%; stdout goes to a log.
"$here/wine-run.sh" --prefix="$prefix" "$exe" >"$build/gui-wine.log" 2>&1 </dev/null &
app_pid=$!
window=""
for _ in $(seq 1 60); do
  window=$(xdotool search --onlyvisible --name 'Magnetar' 2>/dev/null | head -n 1 || true)
  [ -n "$window" ] && break
  kill -0 "$app_pid" 2>/dev/null || { echo "magnetar.exe exited early:" >&2; tail -n 20 "$build/gui-wine.log" >&2; exit 1; }
  sleep 1
done
[ -n "$window" ] || { echo "no Magnetar window after 60 s" >&2; tail -n 20 "$build/gui-wine.log" >&2; exit 1; }
echo "window after $(( $(date +%s) - t0 ))s: $(xdotool getwindowname "$window")"
sleep 3  # a few frames
import -display "$display" -window root "$shot"
# A rendered UI has many distinct colours; a blank or black screen has one or two.
colours=$(convert "$shot" -format '%k' info:)
echo "screenshot: $shot ($colours colours)"
kill -0 "$app_pid" 2>/dev/null || { echo "magnetar.exe died while rendering" >&2; exit 1; }
# A crash shows wine's dialog over a window that still looks drawn: its log line decides.
if grep -q "Unhandled" "$build/gui-wine.log"; then
  echo "magnetar.exe crashed:" >&2; head -n 20 "$build/gui-wine.log" >&2; exit 1
fi
[ "$colours" -gt 16 ] || { echo "the window looks blank" >&2; exit 1; }
echo "gui smoke test passed"
