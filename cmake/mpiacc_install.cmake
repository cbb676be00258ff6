# SPDX-License-Identifier: BSD-3-Clause
# Helpers of the install section (top-level CMakeLists.txt).

# MPICH's wrapper flags (mpicc -show) carry "-Wl,-rpath -Wl,<MPI libdir>";
# FindMPI copies them into MPI::MPI_C's INTERFACE_LINK_OPTIONS, so every
# binary would carry that directory for good.  Takes them out; the build tree
# still finds libmpi (linked by full path) through CMake's build RPATH.
function(mpiacc_strip_mpi_rpath)
  if(NOT TARGET MPI::MPI_C)
    return()
  endif()
  get_target_property(opts MPI::MPI_C INTERFACE_LINK_OPTIONS)
  if(NOT opts)
    return()
  endif()
  # "-Wl,-rpath -Wl,DIR", "-Wl,-rpath,DIR", "-Wl,-rpath=DIR" (commas may be $<COMMA>)
  set(c "(,|\\$<COMMA>)")
  string(REGEX REPLACE "-Wl${c}-rpath[ ]+-Wl${c}[^ >;]+" "" opts "${opts}")
  string(REGEX REPLACE "-Wl${c}-rpath(${c}|=)[^ >;]+" "" opts "${opts}")
  string(REGEX REPLACE "-Wl${c}--enable-new-dtags" "" opts "${opts}")
  set_property(TARGET MPI::MPI_C PROPERTY INTERFACE_LINK_OPTIONS "${opts}")
endfunction()

# The MPI this build uses, for mpiaccConfig.cmake, mpiacc.pc and mpiacc-info:
#   MPIACC_MPI_HOME     MPI_HOME, or the directory above the mpicc used
#   MPIACC_MPI_LIBDIR   directory of the MPI library
#   MPIACC_PC_MPI_CFLAGS / MPIACC_PC_MPI_LIBS   its flags for pkg-config
function(mpiacc_describe_mpi)
  set(home "${MPI_HOME}")
  if(NOT home AND MPI_C_COMPILER)
    get_filename_component(bin "${MPI_C_COMPILER}" DIRECTORY)
    get_filename_component(home "${bin}" DIRECTORY)
  endif()
  set(libdir "")
  set(libs "")
  foreach(l IN LISTS MPI_C_LIBRARIES)
    if(IS_ABSOLUTE "${l}")
      get_filename_component(d "${l}" DIRECTORY)
      get_filename_component(n "${l}" NAME_WE)
      string(REGEX REPLACE "^lib" "" n "${n}")
      if(NOT libdir)
        set(libdir "${d}")
      endif()
      list(APPEND libs "-L${d}" "-l${n}")
    else()
      list(APPEND libs "-l${l}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES libs)
  set(cflags "")
  foreach(i IN LISTS MPI_C_INCLUDE_DIRS)
    list(APPEND cflags "-I${i}")
  endforeach()
  list(JOIN libs " " libs)
  list(JOIN cflags " " cflags)
  # MPICH's netmods, from its mpichversion ("MPICH Device:      ch4:ucx ofi"):
  # mpiacc-run sets the UCX netmod's variables only where UCX is one
  set(netmods "")
  set(cands "${home}/bin/mpichversion")
  if(MPIEXEC_EXECUTABLE)
    get_filename_component(b "${MPIEXEC_EXECUTABLE}" DIRECTORY)
    list(APPEND cands "${b}/mpichversion")
  endif()
  foreach(v IN LISTS cands)
    if(NOT netmods AND EXISTS "${v}")
      execute_process(COMMAND "${v}" OUTPUT_VARIABLE out ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 20)
      if(rc EQUAL 0 AND out MATCHES "MPICH Device:[ \t]*([^\n]*)")
        string(STRIP "${CMAKE_MATCH_1}" netmods)
      endif()
    endif()
  endforeach()
  set(MPIACC_MPI_NETMODS "${netmods}" PARENT_SCOPE)
  set(MPIACC_MPI_HOME "${home}" PARENT_SCOPE)
  set(MPIACC_MPI_LIBDIR "${libdir}" PARENT_SCOPE)
  set(MPIACC_PC_MPI_LIBS "${libs}" PARENT_SCOPE)
  set(MPIACC_PC_MPI_CFLAGS "${cflags}" PARENT_SCOPE)
endfunction()

# MPIACC_INSTALL_MPI_RPATH (AUTO, ON, OFF) -> MPIACC_INSTALL_MPI_RPATH_RESOLVED
# (ON or OFF, also in the cache for tests/install), for an MPI the install
# does not carry (OFF when it does): AUTO is ON when MPI's library directory
# is not one the loader searches by itself (the platform's implicit link
# directories, e.g. /usr/lib/x86_64-linux-gnu).
function(mpiacc_resolve_mpi_rpath)
  if(MPIACC_BUNDLE_MPI)
    set(MPIACC_INSTALL_MPI_RPATH_RESOLVED OFF CACHE INTERNAL "MPIACC_INSTALL_MPI_RPATH, resolved" FORCE)
    message(STATUS "mpiacc: installed RUNPATHs name the install's copy of MPICH ($ORIGIN-relative)")
    return()
  endif()
  set(v "${MPIACC_INSTALL_MPI_RPATH}")
  string(TOUPPER "${v}" v)
  if(v STREQUAL "AUTO")
    set(v ON)
    if(NOT MPIACC_MPI_LIBDIR)
      set(v OFF)
    else()
      get_filename_component(d "${MPIACC_MPI_LIBDIR}" REALPATH)
      foreach(s IN LISTS CMAKE_PLATFORM_IMPLICIT_LINK_DIRECTORIES CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
        get_filename_component(s "${s}" REALPATH)
        if(d STREQUAL s)
          set(v OFF)
        endif()
      endforeach()
    endif()
  elseif(v)
    set(v ON)
  else()
    set(v OFF)
  endif()
  if(v AND NOT MPIACC_MPI_LIBDIR)
    message(WARNING "MPIACC_INSTALL_MPI_RPATH=ON, but the MPI library's directory is unknown")
    set(v OFF)
  endif()
  set(MPIACC_INSTALL_MPI_RPATH_RESOLVED ${v} CACHE INTERNAL "MPIACC_INSTALL_MPI_RPATH, resolved" FORCE)
  message(STATUS "mpiacc: installed RUNPATH names MPI's ${MPIACC_MPI_LIBDIR}: ${v} (MPIACC_INSTALL_MPI_RPATH=${MPIACC_INSTALL_MPI_RPATH})")
endfunction()

# _mpiacc_inside(DIR OUT): OUT is ON when DIR lies in the source or the build
# tree (e.g. the .venv/ scripts/setup.sh makes in a clone).
function(_mpiacc_inside dir out)
  set(${out} OFF PARENT_SCOPE)
  if(NOT dir)
    return()
  endif()
  get_filename_component(d "${dir}" REALPATH)
  foreach(t "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}")
    get_filename_component(t "${t}" REALPATH)
    string(FIND "${d}/" "${t}/" at)
    if(at EQUAL 0)
      set(${out} ON PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

# MPIACC_INSTALL_BUNDLE (AUTO, ON, OFF): whether `cmake --install` copies the
# MPI and the UCX this build uses into <prefix>/<libdir>/mpiacc/ (mpich/:
# MPICH's bin/ (mpiexec, its hydra proxy, the compiler wrappers), include/
# and lib/; ucx/lib: UCX's libraries and transport modules) and points the
# installed files there ($ORIGIN-relative RUNPATHs, mpiacc-run, the CMake
# package, pkg-config), so that the install works once the source tree is
# gone.  AUTO: each one that lies in the source or build tree (the .venv/ of
# scripts/setup.sh); an MPI or UCX elsewhere (system, module, /opt) is
# referenced where it is.  Sets, also in the cache for tests/install:
#   MPIACC_BUNDLE_MPI, MPIACC_BUNDLE_UCX   ON or OFF
function(mpiacc_resolve_bundle)
  string(TOUPPER "${MPIACC_INSTALL_BUNDLE}" mode)
  set(mpi OFF)
  set(ucx OFF)
  # an MPICH prefix: bin/mpiexec and the MPI library in <home>/lib
  set(mpi_ok OFF)
  if(MPIACC_MPI_HOME AND EXISTS "${MPIACC_MPI_HOME}/bin/mpiexec" AND MPIACC_MPI_LIBDIR)
    get_filename_component(a "${MPIACC_MPI_LIBDIR}" REALPATH)
    get_filename_component(b "${MPIACC_MPI_HOME}/lib" REALPATH)
    if(a STREQUAL b)
      set(mpi_ok ON)
    endif()
  endif()
  if(mode STREQUAL "AUTO")
    _mpiacc_inside("${MPIACC_MPI_HOME}" in_mpi)
    _mpiacc_inside("${MPIACC_UCX_LIBRARY_DIR}" in_ucx)
    set(mpi ${in_mpi})
    set(ucx ${in_ucx})
  elseif(mode)
    set(mpi ON)
    set(ucx ON)
  endif()
  if(mpi AND NOT mpi_ok)
    message(WARNING "MPIACC_INSTALL_BUNDLE: ${MPIACC_MPI_HOME} is not an MPICH prefix (bin/mpiexec, lib/ with "
                    "the MPI library): the install references MPI where it is")
    set(mpi OFF)
  endif()
  if(NOT MPIACC_UCX_LIBRARY_DIR)
    set(ucx OFF)
  endif()
  set(MPIACC_BUNDLE_MPI ${mpi} CACHE INTERNAL "the install carries MPICH (MPIACC_INSTALL_BUNDLE, resolved)" FORCE)
  set(MPIACC_BUNDLE_UCX ${ucx} CACHE INTERNAL "the install carries UCX (MPIACC_INSTALL_BUNDLE, resolved)" FORCE)
  set(u "${MPIACC_UCX_LIBRARY_DIR}")
  if(NOT u)
    set(u "(none)")
  endif()
  message(STATUS "mpiacc: the install carries MPICH from ${MPIACC_MPI_HOME}: ${mpi}, UCX from ${u}: ${ucx} "
                 "(MPIACC_INSTALL_BUNDLE=${MPIACC_INSTALL_BUNDLE})")
endfunction()

# The install rules of the copies (MPIACC_BUNDLE_MPI / _UCX) into
# <prefix>/<libdir>/mpiacc/.  Only the run-time pieces and what a program
# needs to build against MPICH (wrappers, headers); no static libraries.
function(mpiacc_install_bundle)
  set(dest "${CMAKE_INSTALL_LIBDIR}/mpiacc")
  if(MPIACC_BUNDLE_MPI)
    set(h "${MPIACC_MPI_HOME}")
    set(progs "")
    foreach(p mpiexec mpiexec.hydra mpiexec.gforker mpirun hydra_pmi_proxy hydra_nameserver hydra_persist
              mpicc mpicxx mpic++ mpichversion mpivars)
      if(EXISTS "${h}/bin/${p}")
        list(APPEND progs "${h}/bin/${p}")
      endif()
    endforeach()
    file(GLOB headers "${h}/include/mpi*.h" "${h}/include/mpio*.h")
    file(GLOB libs "${MPIACC_MPI_LIBDIR}/libmpi.so*" "${MPIACC_MPI_LIBDIR}/libmpicxx.so*"
                   "${MPIACC_MPI_LIBDIR}/libmpifort.so*")
    install(PROGRAMS ${progs} DESTINATION "${dest}/mpich/bin")
    if(headers)
      install(FILES ${headers} DESTINATION "${dest}/mpich/include")
    endif()
    install(PROGRAMS ${libs} DESTINATION "${dest}/mpich/lib")
    # the MPICH wheel's private libraries (libfabric, its own UCX), found by
    # libmpi through RUNPATH $ORIGIN/mpich
    if(IS_DIRECTORY "${MPIACC_MPI_LIBDIR}/mpich")
      install(DIRECTORY "${MPIACC_MPI_LIBDIR}/mpich" DESTINATION "${dest}/mpich/lib" USE_SOURCE_PERMISSIONS)
    endif()
  endif()
  if(MPIACC_BUNDLE_UCX)
    set(l "${MPIACC_UCX_LIBRARY_DIR}")
    set(libs "")
    foreach(n ucp uct ucs ucm ucs_signal)
      if(EXISTS "${l}/lib${n}.so.0")
        list(APPEND libs "${l}/lib${n}.so.0")
      endif()
    endforeach()
    # UCX loads its transport modules from <libucs's directory>/ucx (the
    # perftest module is left out) and its configuration from ../etc/ucx
    file(GLOB mods "${l}/ucx/lib*.so.0")
    list(FILTER mods EXCLUDE REGEX "perftest")
    install(PROGRAMS ${libs} DESTINATION "${dest}/ucx/lib")
    if(mods)
      install(PROGRAMS ${mods} DESTINATION "${dest}/ucx/lib/ucx")
    endif()
    get_filename_component(root "${l}" DIRECTORY)
    if(IS_DIRECTORY "${root}/etc/ucx")
      install(DIRECTORY "${root}/etc/ucx" DESTINATION "${dest}/ucx/etc")
    endif()
    # PyPI's libucx-cu13: the CUDA runtime its CUDA memory hooks load, through
    # RPATH $ORIGIN/../../../libucx_cu13.libs (from ucx/lib/ucx/)
    get_filename_component(parent "${root}" DIRECTORY)
    file(GLOB wheel_libs LIST_DIRECTORIES true "${parent}/libucx*.libs")
    foreach(w IN LISTS wheel_libs)
      if(IS_DIRECTORY "${w}")
        install(DIRECTORY "${w}" DESTINATION "${dest}" USE_SOURCE_PERMISSIONS)
      endif()
    endforeach()
  endif()
endfunction()
