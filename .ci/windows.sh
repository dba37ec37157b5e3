#!/usr/bin/env bash
# Windows leg of CI (called by .ci/run; runs alone too): Debian packages, the Windows dependencies
# (built from Debian source packages, cached outside the clone), the mingw-w64 cross build, the
# whole test suite under wine, a check that the executables import only Windows system DLLs, the
# NSIS installer, the installer test, and magnetar.exe under wine + Xvfb (screenshot artifact:
# <build>/gui-wine.png). Prints a timing breakdown and the exe sizes.
#
# Environment: MAGNETAR_TESTDATA (default ../shared/testdata; required tests fail without it when
# MAGNETAR_REQUIRE_TESTDATA=1), MAGNETAR_WIN_DEPS_CACHE (dependency cache root, default
# ~/.cache/magnetar/win-deps), MAGNETAR_WIN_BUILD (build dir, default build/windows-cross),
# MAGNETAR_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${MAGNETAR_WIN_BUILD:-$root/build/windows-cross}  # default: the windows-cross preset's binaryDir
jobs=${MAGNETAR_JOBS:-2}

SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
export MAGNETAR_TESTDATA=${MAGNETAR_TESTDATA:-$root/../shared/testdata}

declare -a timings=()
failed=()
stage_name="" stage_start=0
begin() { echo; echo "=== windows: $1"; stage_name=$1; stage_start=$(date +%s); }
end() { timings+=("$(printf '  %-44s %5ds' "$stage_name" $(( $(date +%s) - stage_start )))"); stage_name=""; }
all_start=$(date +%s)
# A step that stops the script (set -e) still gets its timing table, with the failed stage last.
on_exit() {
  local status=$?
  [ $status -eq 0 ] && return
  [ -n "$stage_name" ] && timings+=("$(printf '  %-44s %5ds  FAILED' "$stage_name" $(( $(date +%s) - stage_start )))")
  echo "=== windows: timing (total $(( $(date +%s) - all_start ))s)"
  printf '%s\n' "${timings[@]}"
  echo "=== windows: FAILED (exit $status) in stage: ${stage_name:-outside any stage}"
}
trap on_exit EXIT

begin "packages (mingw-w64, wine, nsis, deb-src)"
packages=(mingw-w64 wine wine64 nsis dpkg-dev cmake ninja-build nasm pkg-config
          libgtest-dev nlohmann-json3-dev python3-glad xvfb xdotool imagemagick libgl1-mesa-dri)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# build-deps.sh needs `apt-get source`: enable deb-src for the Debian suites apt already uses,
# from the same mirrors (the machine's own sources, whatever they name), unless some are enabled.
if ! grep -rqs '^Types:.*deb-src\|^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  src_list=$(installer/windows/deb-src-from-sources.sh)
  [ -n "$src_list" ] || { echo "no Debian 'deb' source found in /etc/apt to derive deb-src from" >&2; exit 1; }
  printf '%s\n' "$src_list" | $SUDO tee /etc/apt/sources.list.d/magnetar-deb-src.list >/dev/null
  need_update=1
fi
if [ ${#missing[@]} -gt 0 ] || [ -n "${need_update:-}" ] || ! apt-cache showsrc sentencepiece >/dev/null 2>&1; then
  $SUDO apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
end

begin "dependencies (cached by package versions)"
MAGNETAR_WIN_DEPS=$(installer/windows/build-deps.sh | tail -n 1)
export MAGNETAR_WIN_DEPS
echo "deps: $MAGNETAR_WIN_DEPS"
end

begin "cross build (mingw-w64, -j$jobs)"
cmake -S "$root" -B "$build" -G Ninja --toolchain "$root/cmake/toolchain-mingw-w64.cmake" \
  -DCMAKE_BUILD_TYPE=Release -DMAGNETAR_WIN_DEPS="$MAGNETAR_WIN_DEPS" >/dev/null
cmake --build "$build" -j "$jobs"
end

begin "executables import only Windows system DLLs"
exes=()
for exe in "$build/app/cli/magnetar-cli.exe" "$build/app/gui/magnetar.exe"; do
  [ -f "$exe" ] && exes+=("$exe")
done
installer/windows/check-imports.sh "${exes[@]}" || failed+=("imports")
end

begin "wine prefix warm-up"
installer/windows/wine-run.sh --prefix="$build/wineprefix" --start
end

begin "ctest under wine (-j$jobs)"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 900 2>&1 | tee "$build/ctest-wine.log" |
  grep -E -v '^ +Start +[0-9]+:|^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' || true
grep -q '100% tests passed' "$build/ctest-wine.log" || failed+=("ctest under wine")
end

begin "NSIS installer (cpack)"
(cd "$build" && cpack -G NSIS >/dev/null)
ls -la "$build"/Magnetar-*-win64-setup.exe
end

begin "installer test under wine"
installer/windows/test-installer.sh "$build" || failed+=("installer test")
end

if [ -f "$build/app/gui/magnetar.exe" ]; then
  begin "magnetar.exe under wine + Xvfb (screenshot)"
  installer/windows/gui-smoke.sh "$build" "$build/gui-wine.png" || failed+=("gui smoke test")
  end
fi

installer/windows/wine-run.sh --prefix="$build/wineprefix" --stop

echo
echo "=== windows: sizes"
for f in "${exes[@]}" "$build"/Magnetar-*-win64-setup.exe; do
  awk -v n="$(basename "$f")" -v b="$(stat -c %s "$f")" 'BEGIN { printf "  %-28s %8.2f MiB\n", n, b / 1048576 }'
done
echo "=== windows: timing (total $(( $(date +%s) - all_start ))s)"
printf '%s\n' "${timings[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  trap - EXIT
  echo "=== windows: FAILED: ${failed[*]}"
  exit 1
fi
echo "=== windows: all passed"
