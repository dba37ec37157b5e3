#!/usr/bin/env bash
# Builds the Windows (x86_64, mingw-w64) dependencies from Debian's source packages and installs
# them into a prefix OUTSIDE the clone; prints that prefix as the last line of stdout.
#
#   deps=$(installer/windows/build-deps.sh)      # a few minutes the first time, instant after
#   installer/windows/build-deps.sh --key        # only print the cache key
#   cmake ... --toolchain cmake/toolchain-mingw-w64.cmake -DMAGNETAR_WIN_DEPS="$deps"
#
# What the prefix holds (the same names the Linux build finds from Debian's -dev packages):
#   sentencepiece  static libsentencepiece.a (+ _train), sentencepiece.pc   (apt-get source)
#   pcre2          static libpcre2-8.a (Unicode, JIT), libpcre2-8.pc        (apt-get source)
#   utf8proc       static libutf8proc.a, libutf8proc.pc                     (apt-get source)
#   glfw3          static libglfw3.a, glfw3.pc, glfw3Config.cmake           (apt-get source)
#   imgui          static libimgui.a with the GLFW + OpenGL3 backends and imgui_stdlib, headers in
#                  include/imgui{,/backends}, imgui.pc (same layout as Debian's libimgui-dev)
#   GTest          libgtest/libgmock(_main).a, GTestConfig.cmake   (from /usr/src/googletest)
#   nlohmann_json  headers + nlohmann_jsonConfig.cmake             (copied from nlohmann-json3-dev)
#   share/licenses/<package>/copyright   for the installer (everything linked into the .exe files)
#
# The prefix is keyed by a hash of the package versions, the compiler version, this script and
# the toolchain file (comment lines excluded): $MAGNETAR_WIN_DEPS_CACHE/<key> (default ~/.cache/magnetar/win-deps/<key>).
# A prefix is used only when complete (stamp file written last), so an interrupted build is
# simply redone. Setting MAGNETAR_WIN_DEPS uses that prefix as is (built there if missing).
# Needs: apt-get (deb-src enabled, see .ci/windows.sh), mingw-w64, cmake, ninja, nlohmann-json3-dev,
# libgtest-dev. MAGNETAR_JOBS (default 2) limits parallel compiles.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
toolchain="$repo/cmake/toolchain-mingw-w64.cmake"
jobs=${MAGNETAR_JOBS:-2}
cache_root=${MAGNETAR_WIN_DEPS_CACHE:-$HOME/.cache/magnetar/win-deps}
src_packages=(glfw3 imgui sentencepiece pcre2 utf8proc)

log() { echo "[win-deps] $*" >&2; }
die() { log "error: $*"; exit 1; }

# Versions of a source package that apt knows about, newest first.
source_versions() {
  apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -uV -r
}
source_version() { source_versions "$1" | head -n 1; }
installed_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo missing; }

command -v x86_64-w64-mingw32-g++-posix >/dev/null || die "x86_64-w64-mingw32-g++-posix not found (apt-get install mingw-w64)"
[ -d /usr/src/googletest ] || die "/usr/src/googletest missing (apt-get install libgtest-dev)"
[ -d /usr/include/nlohmann ] || die "/usr/include/nlohmann missing (apt-get install nlohmann-json3-dev)"

declare -A version
for p in "${src_packages[@]}"; do
  version[$p]=$(source_version "$p")
  [ -n "${version[$p]}" ] || die "no source package '$p' known to apt (enable deb-src and run apt-get update)"
done

key_text=$(
  for p in "${src_packages[@]}"; do echo "$p ${version[$p]}"; done
  echo "googletest $(installed_version libgtest-dev)"
  echo "nlohmann-json $(installed_version nlohmann-json3-dev)"
  echo "mingw $(installed_version g++-mingw-w64-x86-64-posix) $(installed_version mingw-w64-x86-64-dev)"
  echo "cmake $(cmake --version | head -n 1)"
  grep -hv '^[[:space:]]*#' "$0" "$toolchain" | sha256sum | cut -d' ' -f1  # comments don't count
)
key=$(printf '%s\n' "$key_text" | sha256sum | cut -c1-16)
prefix=${MAGNETAR_WIN_DEPS:-$cache_root/$key}
stamp="$prefix/.magnetar-win-deps"
if [ "${1:-}" = --key ]; then  # for CI caches: the key alone
  echo "$key"
  exit 0
fi

if [ -f "$stamp" ]; then
  log "cached: $prefix"
  echo "$prefix"
  exit 0
fi

started=$(date +%s)
log "building into $prefix (key $key)"
work=$(mktemp -d "${TMPDIR:-/tmp}/magnetar-win-deps.XXXXXX")
trap 'rm -rf "$work"' EXIT
rm -rf "$prefix"
mkdir -p "$prefix" "$work/src" "$work/logs"

# Runs a build step with its output in a log; shows the log's tail if it fails.
step() {
  local name=$1; shift
  local t0; t0=$(date +%s)
  log "$name ..."
  if ! "$@" >"$work/logs/$name.log" 2>&1; then
    tail -n 40 "$work/logs/$name.log" >&2
    die "$name failed (log above)"
  fi
  log "$name done in $(( $(date +%s) - t0 ))s"
}

cmake_cross() {  # cmake_cross <source dir> <build dir> [-D...]
  local src=$1 bld=$2; shift 2
  cmake -S "$src" -B "$bld" -G Ninja --toolchain "$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DMAGNETAR_WIN_DEPS="$prefix" "$@"
  cmake --build "$bld" -j "$jobs"
  cmake --install "$bld"
}

# --- sources: apt-get source, exact versions, Debian patches applied ---
# A mirror may list a version whose source files it does not serve (a security update's .dsc
# missing from the mirror): fall back to the next older version apt knows, and say so.
fetch_sources() {
  cd "$work/src" || return 1
  local p v fetched
  for p in "${src_packages[@]}"; do
    fetched=""
    for v in $(source_versions "$p"); do
      if apt-get source -q "$p=$v"; then fetched=$v; break; fi
      log "apt-get source $p=$v failed; trying an older version"
      rm -rf "${work:?}/src/${p}"[-_]*
    done
    [ -n "$fetched" ] || { log "no version of source package $p could be fetched"; return 1; }
    echo "$p $fetched" >>"$work/fetched-versions.txt"
  done
}
step fetch-sources fetch_sources
srcdir() { find "$work/src" -maxdepth 1 -mindepth 1 -type d -name "$1-*" | head -n 1; }

# --- GLFW (static) ---
step glfw cmake_cross "$(srcdir glfw3)" "$work/build-glfw" \
  -DBUILD_SHARED_LIBS=OFF -DGLFW_BUILD_EXAMPLES=OFF -DGLFW_BUILD_TESTS=OFF -DGLFW_BUILD_DOCS=OFF

# --- PCRE2 (8-bit code units, Unicode, JIT), static: tokenizer.json pre-tokenizer regexes ---
step pcre2 cmake_cross "$(srcdir pcre2)" "$work/build-pcre2" \
  -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DPCRE2_BUILD_PCRE2_8=ON -DPCRE2_BUILD_PCRE2_16=OFF \
  -DPCRE2_BUILD_PCRE2_32=OFF -DPCRE2_SUPPORT_JIT=ON -DPCRE2_SUPPORT_UNICODE=ON \
  -DPCRE2_BUILD_PCRE2GREP=OFF -DPCRE2_BUILD_TESTS=OFF -DCMAKE_INSTALL_LIBDIR=lib
pcre2_pc="$prefix/lib/pkgconfig/libpcre2-8.pc"
[ -f "$pcre2_pc" ] || die "pcre2 installed no libpcre2-8.pc"
# pcre2.h declares its functions dllimport unless PCRE2_STATIC is defined; the CMake build's .pc
# does not say so for a static build.
grep -q -- '-DPCRE2_STATIC' "$pcre2_pc" || sed -i 's/^Cflags: \(.*\)$/Cflags: \1 -DPCRE2_STATIC/' "$pcre2_pc"
grep -q '^Cflags: .*-DPCRE2_STATIC' "$pcre2_pc" || die "could not add -DPCRE2_STATIC to $pcre2_pc"
rm -f "$prefix/lib/libpcre2-posix.a" "$prefix/lib/pkgconfig/libpcre2-posix.pc"  # not used

# --- utf8proc (Unicode normalisation), static; its CMake build installs no .pc: write one with
# UTF8PROC_STATIC, which its header needs to link statically on Windows ---
utf8proc_src=$(srcdir utf8proc)
step utf8proc cmake_cross "$utf8proc_src" "$work/build-utf8proc" \
  -DBUILD_SHARED_LIBS=OFF -DUTF8PROC_ENABLE_TESTING=OFF -DCMAKE_INSTALL_LIBDIR=lib
[ -f "$prefix/lib/libutf8proc.a" ] || die "utf8proc installed no libutf8proc.a"
utf8proc_version=${version[utf8proc]%%-*}
cat >"$prefix/lib/pkgconfig/libutf8proc.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libutf8proc
Description: UTF-8 processing library (Debian source $utf8proc_version), static, for Windows
Version: $utf8proc_version
Libs: -L\${libdir} -lutf8proc
Cflags: -I\${includedir} -DUTF8PROC_STATIC
PC

# --- Dear ImGui: core + imgui_stdlib + GLFW/OpenGL3 backends, bundled stb (Debian's -dev build
# links the system libstb instead, which has no Windows build) ---
imgui_src=$(srcdir imgui)
imgui_version=${version[imgui]%%+*}
mkdir -p "$work/imgui-cmake"
cat >"$work/imgui-cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(imgui VERSION $imgui_version LANGUAGES CXX)
find_package(glfw3 3.3 REQUIRED)
set(S "$imgui_src")
add_library(imgui STATIC \${S}/imgui.cpp \${S}/imgui_draw.cpp \${S}/imgui_tables.cpp
            \${S}/imgui_widgets.cpp \${S}/imgui_demo.cpp \${S}/misc/cpp/imgui_stdlib.cpp
            \${S}/backends/imgui_impl_glfw.cpp \${S}/backends/imgui_impl_opengl3.cpp)
target_include_directories(imgui PRIVATE \${S} \${S}/backends)
target_link_libraries(imgui PRIVATE glfw)
install(TARGETS imgui ARCHIVE DESTINATION lib)
install(FILES \${S}/imgui.h \${S}/imconfig.h \${S}/imgui_internal.h \${S}/imstb_rectpack.h
              \${S}/imstb_textedit.h \${S}/imstb_truetype.h \${S}/misc/cpp/imgui_stdlib.h
        DESTINATION include/imgui)
install(FILES \${S}/backends/imgui_impl_glfw.h \${S}/backends/imgui_impl_opengl3.h
              \${S}/backends/imgui_impl_opengl3_loader.h
        DESTINATION include/imgui/backends)
CMAKE
step imgui cmake_cross "$work/imgui-cmake" "$work/build-imgui"
mkdir -p "$prefix/lib/pkgconfig"
cat >"$prefix/lib/pkgconfig/imgui.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include/imgui

Name: imgui
Description: Dear ImGui (Debian source $imgui_version) with the GLFW and OpenGL3 backends, for Windows
Version: $imgui_version
Requires: glfw3
Libs: -L\${libdir} -limgui
Libs.private: -lgdi32 -limm32
Cflags: -I\${includedir}
PC

# --- GoogleTest from libgtest-dev's sources ---
step googletest cmake_cross /usr/src/googletest "$work/build-gtest" \
  -DBUILD_SHARED_LIBS=OFF -Dgtest_force_shared_crt=OFF

# --- nlohmann_json: header-only, Debian's headers and CMake package as they are ---
copy_json() {
  mkdir -p "$prefix/include" "$prefix/share/cmake" "$prefix/share/pkgconfig"
  cp -a /usr/include/nlohmann "$prefix/include/"
  cp -a /usr/share/cmake/nlohmann_json "$prefix/share/cmake/"
  sed "s|^prefix=.*|prefix=$prefix|" /usr/share/pkgconfig/nlohmann_json.pc >"$prefix/share/pkgconfig/nlohmann_json.pc"
}
step nlohmann_json copy_json

# --- SentencePiece: static libraries (Debian's patch removes them; undo it), built-in protobuf ---
spm_src=$(srcdir sentencepiece)
unpatch_spm() { cd "$spm_src" && patch -R -p1 <debian/patches/disable-static-library.patch; }
step sentencepiece-unpatch unpatch_spm
step sentencepiece cmake_cross "$spm_src" "$work/build-spm" \
  -DSPM_ENABLE_SHARED=OFF -DSPM_ENABLE_TCMALLOC=OFF -DSPM_USE_BUILTIN_PROTOBUF=ON \
  -DSPM_BUILD_TEST=OFF -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_INSTALL_INCDIR=include \
  -DCMAKE_INSTALL_INCLUDEDIR=include
# pkg-config's output is a list of words, with or without a trailing space (pkgconf 1.8 adds
# one): look for the header under each -I word.
spm_cflags=$(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config --cflags-only-I sentencepiece)
spm_header_found=0
read -r -a spm_flags <<<"$spm_cflags"
for flag in "${spm_flags[@]}"; do
  [[ $flag == -I* && -f "${flag#-I}/sentencepiece_processor.h" ]] && spm_header_found=1
done
[ $spm_header_found = 1 ] || die "sentencepiece.pc points to the wrong headers (cflags: '$spm_cflags')"
# Windows executables of the sentencepiece tools are not needed.
rm -f "$prefix"/bin/spm_*.exe
rmdir "$prefix/bin" 2>/dev/null || true

# --- licences of everything linked into the executables, for the installer ---
copy_licences() {
  local p
  for p in "${src_packages[@]}"; do
    mkdir -p "$prefix/share/licenses/$p"
    cp "$(srcdir "$p")/debian/copyright" "$prefix/share/licenses/$p/copyright"
  done
  mkdir -p "$prefix/share/licenses/googletest" "$prefix/share/licenses/nlohmann-json"
  cp /usr/share/doc/libgtest-dev/copyright "$prefix/share/licenses/googletest/copyright"
  cp /usr/share/doc/nlohmann-json3-dev/copyright "$prefix/share/licenses/nlohmann-json/copyright"
  # The statically linked runtimes: mingw-w64 CRT + winpthreads, and GCC's libstdc++/libgcc.
  mkdir -p "$prefix/share/licenses/mingw-w64" "$prefix/share/licenses/gcc-runtime"
  cp /usr/share/doc/mingw-w64-common/copyright "$prefix/share/licenses/mingw-w64/copyright"
  cp /usr/share/doc/gcc-mingw-w64-x86-64-posix-runtime/copyright \
     "$prefix/share/licenses/gcc-runtime/copyright"
}
step licences copy_licences

{ printf '%s\n' "$key_text"; echo "fetched:"; cat "$work/fetched-versions.txt"; } >"$prefix/versions.txt"
touch "$stamp"
log "done in $(( $(date +%s) - started ))s: $prefix"
echo "$prefix"
