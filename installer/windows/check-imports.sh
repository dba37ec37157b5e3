#!/usr/bin/env bash
# Fails unless every given .exe imports only DLLs that ship with Windows itself (the static
# mingw-w64 runtime must leave no libstdc++-6.dll, libgcc_s_seh-1.dll or libwinpthread-1.dll
# behind, nor any third-party DLL).
#   installer/windows/check-imports.sh app.exe [more.exe ...]
set -euo pipefail
objdump=${OBJDUMP:-x86_64-w64-mingw32-objdump}
# Windows system DLLs we accept (lower case). msvcrt.dll is the system C runtime mingw-w64 uses.
allowed=" kernel32.dll user32.dll gdi32.dll advapi32.dll shell32.dll ole32.dll oleaut32.dll
  msvcrt.dll opengl32.dll imm32.dll comdlg32.dll winspool.drv uuid.dll ws2_32.dll bcrypt.dll
  dwmapi.dll shlwapi.dll version.dll winmm.dll ntdll.dll psapi.dll uxtheme.dll comctl32.dll
  api-ms-win-core-synch-l1-2-0.dll "
allowed=" $(echo $allowed) "  # one space between names
status=0
[ $# -ge 1 ] || { echo "usage: $0 app.exe [...]" >&2; exit 2; }
for exe in "$@"; do
  dlls=$("$objdump" -p "$exe" | sed -n 's/^\s*DLL Name: //p' | tr 'A-Z' 'a-z' | sort -u)
  bad=""
  for dll in $dlls; do
    case "$allowed" in *" $dll "*) ;; *) bad+=" $dll" ;; esac
  done
  if [ -n "$bad" ]; then
    echo "FAIL $(basename "$exe") imports non-system DLLs:$bad" >&2
    status=1
  else
    echo "ok   $(basename "$exe") imports only system DLLs: $(echo $dlls)"
  fi
done
exit $status
