# Warnings for our own targets only (third-party headers are included as SYSTEM).
function(magnetar_warnings target)
  if(MSVC)
    target_compile_options(${target} PRIVATE /W4)
  else()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra>)
  endif()
endfunction()
