# Cross toolchain: Linux -> 64-bit Windows with mingw-w64 (Debian's `mingw-w64` package).
# Uses the posix thread model (std::thread, std::mutex via winpthreads) and links everything
# statically, so the executables import only Windows system DLLs.
#
#   cmake -S . -B build-win -G Ninja --toolchain cmake/toolchain-mingw-w64.cmake \
#         -DMAGNETAR_WIN_DEPS=$(installer/windows/build-deps.sh)
#
# MAGNETAR_WIN_DEPS (cache variable or environment variable) is the prefix holding the Windows
# builds of sentencepiece, GLFW, ImGui, GoogleTest and nlohmann_json (installer/windows/build-deps.sh
# makes it, and passes its own prefix while building them). Tests and other target executables
# run through wine (installer/windows/wine-run.sh).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)

set(MAGNETAR_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${MAGNETAR_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${MAGNETAR_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${MAGNETAR_MINGW_TRIPLE}-windres)
# The kernels are the same NASM sources as on Linux, assembled as Win64 COFF objects.
set(CMAKE_ASM_NASM_OBJECT_FORMAT win64)

# Static C/C++ runtime (libgcc, libstdc++, winpthread): nothing to ship beside the .exe.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")

# The dependency prefix travels into try_compile projects too.
if(NOT MAGNETAR_WIN_DEPS AND DEFINED ENV{MAGNETAR_WIN_DEPS})
  set(MAGNETAR_WIN_DEPS "$ENV{MAGNETAR_WIN_DEPS}")
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MAGNETAR_WIN_DEPS)

# Search only the mingw sysroot and the dependency prefix for libraries, headers and packages;
# build tools (nasm, pkg-config) come from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${MAGNETAR_MINGW_TRIPLE})
if(MAGNETAR_WIN_DEPS)
  list(APPEND CMAKE_FIND_ROOT_PATH "${MAGNETAR_WIN_DEPS}")
  list(APPEND CMAKE_PREFIX_PATH "${MAGNETAR_WIN_DEPS}")
  # pkg-config must see the Windows .pc files only, never the host's.
  set(ENV{PKG_CONFIG_LIBDIR} "${MAGNETAR_WIN_DEPS}/lib/pkgconfig:${MAGNETAR_WIN_DEPS}/share/pkgconfig")
  set(ENV{PKG_CONFIG_PATH} "")
  unset(ENV{PKG_CONFIG_SYSROOT_DIR})
endif()
if(NOT MAGNETAR_WIN_DEPS)
  message(FATAL_ERROR "MAGNETAR_WIN_DEPS is not set: build the Windows dependencies first, "
                      "e.g. -DMAGNETAR_WIN_DEPS=$(installer/windows/build-deps.sh)")
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Target executables (tests, gtest discovery) run under wine; the wrapper keeps wine's
# background processes away from CTest's output pipes. Its prefix lives in the build tree.
get_filename_component(MAGNETAR_WINE_RUN "${CMAKE_CURRENT_LIST_DIR}/../installer/windows/wine-run.sh" ABSOLUTE)
set(CMAKE_CROSSCOMPILING_EMULATOR "${MAGNETAR_WINE_RUN};--prefix=${CMAKE_BINARY_DIR}/wineprefix")
