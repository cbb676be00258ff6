# SPDX-License-Identifier: BSD-3-Clause
# UCX discovery (included from the top CMakeLists.txt after MPI, before src/).
#
# mpiacc does not link UCX: MPICH's UCX netmod loads it.  mpiacc needs to know
#  - its headers, for the engine's probe of the transport (src/engine uses
#    MPIACC_UCX_INCLUDE_DIR: the real probe when it holds ucp/api/ucp.h, a
#    stub otherwise);
#  - its library directory, which mpiacc-run puts first on the ranks'
#    LD_LIBRARY_PATH (MPICH's own RUNPATH names the UCX bundled with the
#    MPICH wheel, built without CUDA), and which the install copies when it
#    lies in the source or build tree (cmake/mpiacc_install.cmake).
#
# Cache variables:
#   MPIACC_UCX_ROOT         a UCX installation (include/, lib/); default, in
#                           this order: PyPI's libucx-cu13 beside MPICH in a
#                           Python environment (MPI_HOME's, or the source
#                           tree's .venv/: scripts/setup.sh installs it
#                           there), then $UCX_ROOT, then none.  "none" (or
#                           OFF, empty) builds without UCX.
#   MPIACC_UCX_INCLUDE_DIR  its include/ holding ucp/api/ucp.h
#   MPIACC_UCX_LIBRARY_DIR  its lib/ holding libucp.so.0
# Also sets (normal variables): MPIACC_UCX_VERSION ("1.22" or ""),
# MPIACC_UCX_CUDA (ON when lib/ucx/ has the CUDA transports),
# MPIACC_UCX_FROM (how the root was chosen, for the messages).

# PyPI's libucx package (…/site-packages/libucx, holding lib/libucp.so.0) in
# the Python environment PREFIX, or "".
function(_mpiacc_ucx_in_venv prefix out)
  set(${out} "" PARENT_SCOPE)
  if(NOT prefix OR NOT IS_DIRECTORY "${prefix}")
    return()
  endif()
  file(GLOB cands "${prefix}/lib/python3*/site-packages/libucx/lib/libucp.so.0"
                  "${prefix}/lib64/python3*/site-packages/libucx/lib/libucp.so.0")
  if(cands)
    list(GET cands 0 c)
    get_filename_component(c "${c}" DIRECTORY)
    get_filename_component(c "${c}" DIRECTORY)
    set(${out} "${c}" PARENT_SCOPE)
  endif()
endfunction()

function(_mpiacc_ucx_default out from)
  set(homes "${MPI_HOME}")
  if(MPI_C_COMPILER)
    get_filename_component(b "${MPI_C_COMPILER}" DIRECTORY)
    get_filename_component(b "${b}" DIRECTORY)
    list(APPEND homes "${b}")
  endif()
  list(APPEND homes "${PROJECT_SOURCE_DIR}/.venv")
  foreach(h IN LISTS homes)
    _mpiacc_ucx_in_venv("${h}" r)
    if(r)
      set(${out} "${r}" PARENT_SCOPE)
      set(${from} "PyPI's libucx beside MPICH in ${h}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  if(DEFINED ENV{UCX_ROOT} AND IS_DIRECTORY "$ENV{UCX_ROOT}")
    set(${out} "$ENV{UCX_ROOT}" PARENT_SCOPE)
    set(${from} "\$UCX_ROOT" PARENT_SCOPE)
    return()
  endif()
  set(${out} "none" PARENT_SCOPE)
  set(${from} "none found" PARENT_SCOPE)
endfunction()

_mpiacc_ucx_default(_ucx_auto _ucx_from)
# The default follows the machine (e.g. scripts/setup.sh installed UCX after
# the first configure) until the user sets the variable to something else.
if(NOT DEFINED MPIACC_UCX_ROOT OR "${MPIACC_UCX_ROOT}" STREQUAL "${_MPIACC_UCX_ROOT_AUTO}")
  set(MPIACC_UCX_ROOT "${_ucx_auto}" CACHE PATH
      "UCX for MPICH's UCX netmod (include/, lib/); none: without (default: libucx beside MPICH, else \$UCX_ROOT)" FORCE)
  set(MPIACC_UCX_FROM "${_ucx_from}")
else()
  set(MPIACC_UCX_FROM "set with -DMPIACC_UCX_ROOT")
  set_property(CACHE MPIACC_UCX_ROOT PROPERTY TYPE PATH)
endif()
set(_MPIACC_UCX_ROOT_AUTO "${_ucx_auto}" CACHE INTERNAL "the default MPIACC_UCX_ROOT last computed")

# A new root: find the directories again.
if(NOT "${MPIACC_UCX_ROOT}" STREQUAL "${_MPIACC_UCX_ROOT_USED}")
  unset(MPIACC_UCX_INCLUDE_DIR CACHE)
  unset(MPIACC_UCX_LIBRARY_DIR CACHE)
endif()
set(_MPIACC_UCX_ROOT_USED "${MPIACC_UCX_ROOT}" CACHE INTERNAL "MPIACC_UCX_ROOT the directories were found in")

set(_ucx_paths "")
string(TOUPPER "${MPIACC_UCX_ROOT}" _ucx_up)
if(NOT _ucx_up MATCHES "^(|NONE|OFF|NO|FALSE|0)$")
  set(_ucx_paths "${MPIACC_UCX_ROOT}")
  if(NOT IS_DIRECTORY "${MPIACC_UCX_ROOT}")
    message(WARNING "MPIACC_UCX_ROOT=${MPIACC_UCX_ROOT} is not a directory")
  endif()
endif()
find_path(MPIACC_UCX_INCLUDE_DIR ucp/api/ucp.h PATHS ${_ucx_paths} PATH_SUFFIXES include NO_DEFAULT_PATH
          DOC "UCX headers (ucp/api/ucp.h): the engine's UCX probe")
find_path(MPIACC_UCX_LIBRARY_DIR libucp.so.0 PATHS ${_ucx_paths} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH
          DOC "UCX libraries (libucp.so.0): first on the ranks' LD_LIBRARY_PATH under mpiacc-run")

set(MPIACC_UCX_VERSION "")
if(MPIACC_UCX_INCLUDE_DIR AND EXISTS "${MPIACC_UCX_INCLUDE_DIR}/ucp/api/ucp_version.h")
  file(STRINGS "${MPIACC_UCX_INCLUDE_DIR}/ucp/api/ucp_version.h" _v REGEX "^#define UCP_API_(MAJOR|MINOR) ")
  string(REGEX REPLACE ".*UCP_API_MAJOR +([0-9]+).*" "\\1" _maj "${_v}")
  string(REGEX REPLACE ".*UCP_API_MINOR +([0-9]+).*" "\\1" _min "${_v}")
  if(_maj MATCHES "^[0-9]+$" AND _min MATCHES "^[0-9]+$")
    set(MPIACC_UCX_VERSION "${_maj}.${_min}")
  endif()
endif()
set(MPIACC_UCX_CUDA OFF)
if(MPIACC_UCX_LIBRARY_DIR AND EXISTS "${MPIACC_UCX_LIBRARY_DIR}/ucx/libuct_cuda.so.0")
  set(MPIACC_UCX_CUDA ON)
endif()

if(MPIACC_UCX_LIBRARY_DIR OR MPIACC_UCX_INCLUDE_DIR)
  set(_ucx_cuda "without CUDA transports")
  if(MPIACC_UCX_CUDA)
    set(_ucx_cuda "with CUDA transports")
  endif()
  message(STATUS "mpiacc: UCX ${MPIACC_UCX_VERSION} ${_ucx_cuda} at ${MPIACC_UCX_ROOT} (${MPIACC_UCX_FROM}): "
                 "headers ${MPIACC_UCX_INCLUDE_DIR}, libraries ${MPIACC_UCX_LIBRARY_DIR}")
  if(NOT MPIACC_UCX_LIBRARY_DIR OR NOT MPIACC_UCX_INCLUDE_DIR)
    message(WARNING "MPIACC_UCX_ROOT=${MPIACC_UCX_ROOT}: only part of UCX found (headers: ${MPIACC_UCX_INCLUDE_DIR}, "
                    "libucp.so.0: ${MPIACC_UCX_LIBRARY_DIR})")
  endif()
else()
  message(STATUS "mpiacc: UCX none (MPIACC_UCX_ROOT=${MPIACC_UCX_ROOT}, ${MPIACC_UCX_FROM}): mpiacc-run leaves "
                 "the ranks' UCX to MPICH; scripts/setup.sh installs PyPI's libucx-cu13, or set MPIACC_UCX_ROOT")
endif()
unset(_ucx_auto)
unset(_ucx_from)
unset(_ucx_paths)
unset(_ucx_up)
unset(_ucx_cuda)
