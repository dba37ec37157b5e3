# -DMAGNETAR_SANITIZE=address,undefined (or thread) instruments every C/C++ target.
if(MAGNETAR_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${MAGNETAR_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${MAGNETAR_SANITIZE})
endif()
