#!/usr/bin/env bash
# Installer test, under wine in a fresh prefix:
#   1. silent install (/S) of the CPack NSIS installer found in BUILD_DIR
#   2. files in Program Files, Start-menu shortcuts, Add/Remove Programs registry entry
#      (name, version, size, icon, uninstaller)
#   3. the INSTALLED magnetar-cli.exe converts stories260K into a folder whose name has spaces and
#      non-ASCII characters, shows `info`, and `run`s it greedily: the text must be llama2.c's
#   4. silent uninstall: program files, shortcuts and registry entry gone, user data kept
#   5. reinstall + `Uninstall.exe /S /REMOVEUSERDATA`: user data gone too
#
#   installer/windows/test-installer.sh BUILD_DIR
# Needs MAGNETAR_TESTDATA (default ../shared/testdata beside the clone). Exit status 0 = passed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
testdata=${MAGNETAR_TESTDATA:-$repo/../shared/testdata}

setup=$(find "$build" -maxdepth 1 -name 'Magnetar-*-win64-setup.exe' | sort | tail -n 1)
[ -n "$setup" ] || { echo "no Magnetar-*-win64-setup.exe in $build (cmake --build $build --target package)" >&2; exit 1; }
version=$(basename "$setup" | sed 's/^Magnetar-\(.*\)-win64-setup\.exe$/\1/')
has_gui=0
[ -f "$build/app/gui/magnetar.exe" ] && has_gui=1

work="$build/installer-test"
prefix="$work/wineprefix"
rm -rf "$work"
mkdir -p "$work"
wine_run() { "$here/wine-run.sh" --prefix="$prefix" "$@"; }
trap '"$here/wine-run.sh" --prefix="$prefix" --stop' EXIT

failures=0
pass() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

echo "installer test: $(basename "$setup") (version $version, GUI: $has_gui)"
t0=$(date +%s)
wine_run --start
echo "  wine prefix ready in $(( $(date +%s) - t0 ))s"

drive_c="$prefix/drive_c"
program_dir="$drive_c/Program Files/Magnetar"
win_program_dir='C:\Program Files\Magnetar'
uninstall_key='HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall\Magnetar'
user=$(wine_run cmd /c 'echo %USERNAME%' | tr -d '\r\n')
appdata="$drive_c/users/$user/AppData/Roaming/Magnetar"
localappdata="$drive_c/users/$user/AppData/Local/Magnetar"

start_menu_dir() {
  find "$drive_c" -type d -path '*Start Menu/Programs/Magnetar' 2>/dev/null | head -n 1
}
registry_value() {  # registry_value NAME -> the value's data, or nothing
  wine_run reg query "$uninstall_key" /v "$1" 2>/dev/null | tr -d '\r' |
    awk -v name="$1" '$1 == name { $1 = ""; $2 = ""; sub(/^ +/, ""); print }'
}
# The uninstaller copies itself to %TEMP% and returns at once; wait for the copy to finish.
wait_until_gone() {
  for _ in $(seq 1 120); do
    [ ! -e "$1" ] && return 0
    sleep 0.5
  done
  return 1
}

# ---- 1. install ----
t_install=$(date +%s)
check "silent install exits 0" wine_run "$setup" /S
echo "  installed in $(( $(date +%s) - t_install ))s"

# ---- 2. files, shortcuts, registry ----
check "bin/magnetar-cli.exe installed" test -f "$program_dir/bin/magnetar-cli.exe"
if [ $has_gui = 1 ]; then
  check "bin/magnetar.exe installed" test -f "$program_dir/bin/magnetar.exe"
fi
check "Uninstall.exe installed" test -f "$program_dir/Uninstall.exe"
check "third-party licences installed" test -f "$program_dir/licenses/sentencepiece/copyright"
check "the embedded UI font's licence installed" test -f "$program_dir/licenses/fonts-dejavu/FONTS.md"
menu=$(start_menu_dir)
check "Start-menu folder exists" test -n "$menu"
check "Start-menu uninstaller shortcut" test -f "$menu/Uninstall.lnk"
if [ $has_gui = 1 ]; then
  check "Start-menu Magnetar shortcut" test -f "$menu/Magnetar.lnk"
fi
display_name=$(registry_value DisplayName)
display_version=$(registry_value DisplayVersion)
estimated_size=$(registry_value EstimatedSize)
uninstall_string=$(registry_value UninstallString)
display_icon=$(registry_value DisplayIcon)
check "Add/Remove Programs: DisplayName '$display_name'" test "$display_name" = "Magnetar"
check "Add/Remove Programs: DisplayVersion '$display_version' = $version" test "$display_version" = "$version"
size_kib=$(( ${estimated_size:-0} ))  # reg prints REG_DWORD as 0x...
installed_kib=$(( $(du -sk "$program_dir" | cut -f1) ))
check "Add/Remove Programs: EstimatedSize ${size_kib} KiB (installed: ${installed_kib} KiB)" \
  test "$size_kib" -gt $(( installed_kib / 2 )) -a "$size_kib" -lt $(( installed_kib * 2 + 64 ))
check "Add/Remove Programs: UninstallString '$uninstall_string'" \
  test "$uninstall_string" = "\"$win_program_dir\\Uninstall.exe\""
check "Add/Remove Programs: DisplayIcon '$display_icon'" \
  test "${display_icon,,}" = "${win_program_dir,,}\\bin\\magnetar$([ $has_gui = 1 ] || echo -cli).exe"

# ---- 3. the installed CLI on a real model, in a folder with spaces and non-ASCII characters ----
cli="$program_dir/bin/magnetar-cli.exe"
model_dir="$drive_c/users/Public/Modèles de test ✓ 模型"
mkdir -p "$model_dir"
if [ -f "$testdata/stories260K/stories260K.bin" ]; then
  cp "$testdata/stories260K/stories260K.bin" "$testdata/stories260K/tok512.model" "$model_dir/"
  win_model_dir='C:\users\Public\Modèles de test ✓ 模型'
  check "installed CLI converts stories260K (non-ASCII path)" \
    wine_run "$cli" convert "$win_model_dir\\stories260K.bin" "$win_model_dir\\stories260K.mgn" \
      --tokenizer "$win_model_dir\\tok512.model" --dtype f32
  info=$(wine_run "$cli" info -m "$win_model_dir\\stories260K.mgn" 2>&1 | tr -d '\r' || true)
  printf '%s\n' "$info" | sed 's/^/        /' | head -n 12
  check "installed CLI: info shows the model" grep -q -i -E 'llama|layers' <<<"$info"
  expected=$(head -c 120 "$testdata/stories260K/expected_greedy_200.txt" | tr -d '\r')
  generated=$(wine_run "$cli" run -m "$win_model_dir\\stories260K.mgn" --tokens 1 -n 200 --temp 0 \
                --no-stop 2>/dev/null | tr -d '\r' || true)
  echo "        run: ${generated:0:100}..."
  check "installed CLI: greedy text matches llama2.c's" test "${generated:0:100}" = "${expected:0:100}"
else
  fail "test data missing: $testdata/stories260K/stories260K.bin"
fi

# Per-user data as the app leaves it: chats under %APPDATA%, converted models under %LOCALAPPDATA%.
mkdir -p "$appdata/chats" "$localappdata/models"
echo '{"title":"kept"}' >"$appdata/chats/chat-1.json"
echo 'model' >"$localappdata/models/kept.mgn"

# ---- 4. silent uninstall keeps user data ----
t_uninstall=$(date +%s)
check "silent uninstall exits 0" wine_run "$program_dir/Uninstall.exe" /S
check "program files removed" wait_until_gone "$program_dir"
echo "  uninstalled in $(( $(date +%s) - t_uninstall ))s"
check "Start-menu folder removed" test -z "$(start_menu_dir)"
check "Add/Remove Programs entry removed" test -z "$(registry_value DisplayVersion)"
check "user data kept: %APPDATA%\\Magnetar\\chats\\chat-1.json" test -f "$appdata/chats/chat-1.json"
check "user data kept: %LOCALAPPDATA%\\Magnetar\\models\\kept.mgn" test -f "$localappdata/models/kept.mgn"

# ---- 5. the user can ask for their data to go ----
check "reinstall exits 0" wine_run "$setup" /S
check "uninstall /REMOVEUSERDATA exits 0" wine_run "$program_dir/Uninstall.exe" /S /REMOVEUSERDATA
check "program files removed again" wait_until_gone "$program_dir"
check "user data removed on request (roaming)" wait_until_gone "$appdata"
check "user data removed on request (local)" wait_until_gone "$localappdata"

echo "installer test: $failures failure(s), $(( $(date +%s) - t0 ))s"
[ "$failures" = 0 ]
