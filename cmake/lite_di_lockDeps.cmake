# lite_di_lockDeps.cmake -- find the client libraries of the adapters.
# Shared by CMakeLists.txt (add_subdirectory / FetchContent) and the installed
# lite_di_lockConfig.cmake (find_package), so both find them the same way:
# the library's own CMake package first, then pkg-config (Debian 12 ships no
# CMake package for hiredis 0.14), quietly; the caller decides what is fatal.
#
#   ldl__find_hiredis(<out-var>)   sets <out-var> to a target name, or "" if not found
#   ldl__find_libpq(<out-var>)     the same for libpq

function(ldl__pkg_config_target out module)
  set(${out} "" PARENT_SCOPE)
  find_package(PkgConfig QUIET)
  if(NOT PKG_CONFIG_FOUND)
    return()
  endif()
  string(TOUPPER "LDL__PC_${module}" prefix)
  if(NOT TARGET PkgConfig::${prefix})
    pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})
  endif()
  if(TARGET PkgConfig::${prefix})
    set(${out} PkgConfig::${prefix} PARENT_SCOPE)
  endif()
endfunction()

function(ldl__find_hiredis out)
  if(NOT TARGET hiredis::hiredis)
    find_package(hiredis CONFIG QUIET)
  endif()
  if(TARGET hiredis::hiredis)
    set(${out} hiredis::hiredis PARENT_SCOPE)
    return()
  endif()
  ldl__pkg_config_target(t hiredis)
  set(${out} "${t}" PARENT_SCOPE)
endfunction()

function(ldl__find_libpq out)
  if(NOT TARGET PostgreSQL::PostgreSQL)
    find_package(PostgreSQL QUIET)
  endif()
  if(TARGET PostgreSQL::PostgreSQL)
    set(${out} PostgreSQL::PostgreSQL PARENT_SCOPE)
    return()
  endif()
  ldl__pkg_config_target(t libpq)
  set(${out} "${t}" PARENT_SCOPE)
endfunction()
