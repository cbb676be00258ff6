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
  set(MPIACC_MPI_HOME "${home}" PARENT_SCOPE)
  set(MPIACC_MPI_LIBDIR "${libdir}" PARENT_SCOPE)
  set(MPIACC_PC_MPI_LIBS "${libs}" PARENT_SCOPE)
  set(MPIACC_PC_MPI_CFLAGS "${cflags}" PARENT_SCOPE)
endfunction()
